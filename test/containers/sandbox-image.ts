/**
 * Builds the sandbox's container image from the project's own files, with no registry: a `FROM scratch` image
 * holding this machine's `node` binary, the shared libraries it links, and the sandbox bundled into one file.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { GenericContainer } from 'testcontainers';
import { place, sharedLibraries } from '../../scripts/image.ts';
import { SANDBOX_NODE_FLAGS } from '../../src/sandbox/spawn.ts';

/** The image's name. */
export const SANDBOX_IMAGE = 'pool-export-sandbox:local';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Builds the image and returns its name. */
export async function buildSandboxImage(): Promise<string> {
  const ctx = mkdtempSync(join(tmpdir(), 'pool-export-image-'));
  try {
    const rootfs = join(ctx, 'rootfs');
    place(rootfs, process.execPath, '/usr/local/bin/node');
    for (const lib of sharedLibraries(process.execPath)) place(rootfs, lib);
    await build({
      entryPoints: [join(ROOT, 'src/sandbox/standalone.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      outfile: join(rootfs, 'app/sandbox.mjs'),
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
      logLevel: 'error',
    });
    // The upstream schemas, where the code reads them: `../../src/schemas/` from the bundle's folder (/app/../.. is /).
    for (const f of readdirSync(join(ROOT, 'src/schemas')).filter((n) => n.endsWith('.graphql')))
      place(rootfs, join(ROOT, 'src/schemas', f), `/src/schemas/${f}`);
    mkdirSync(join(rootfs, 'tmp'));
    writeFileSync(
      join(ctx, 'Dockerfile'),
      `FROM scratch\nCOPY rootfs/ /\nENTRYPOINT ${JSON.stringify(['/usr/local/bin/node', ...SANDBOX_NODE_FLAGS, '/app/sandbox.mjs'])}\n`,
    );
    await GenericContainer.fromDockerfile(ctx).build(SANDBOX_IMAGE, { deleteOnExit: false });
    return SANDBOX_IMAGE;
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}
