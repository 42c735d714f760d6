/**
 * Builds pool-export's container image from the project's own files, with no registry (`make image`): a `FROM
 * scratch` image holding Node.js 24 (the `node24` package's binary), the shared libraries it and DuckDB's addon link,
 * the compiled command line (`dist/bin/`), the files it reads at run time (`sql/`, `src/schemas/`, `package.json`),
 * and the npm packages the bundle leaves external (DuckDB's, apache-arrow's, echarts' one file). It runs as user
 * 10001 with the bundled CLI as its entrypoint; `/data` (the data folder) and `/config` are volumes.
 *
 *   node --import tsx scripts/image.ts [--tag pool-export:local]     prints the image's name and size
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NODE_MODULES = join(ROOT, 'node_modules');

/** The image's default name. */
export const IMAGE = 'pool-export:local';

/** The user the image runs as (no name in the host's /etc/passwd is needed). */
export const IMAGE_USER = 10001;

/** The Node.js the image runs: the project's Node 24, or this process' Node where that package is absent. */
function nodeBinary(): string {
  const pinned = join(NODE_MODULES, 'node24/bin/node');
  return existsSync(pinned) ? pinned : process.execPath;
}

/** The shared libraries a binary loads, as absolute paths, from `ldd`. */
export function sharedLibraries(binary: string): string[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  return [...out.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
}

/** Copies `file` into `root` at `at` (its own path by default), following symbolic links. */
export function place(root: string, file: string, at = file): void {
  mkdirSync(join(root, dirname(at)), { recursive: true });
  copyFileSync(realpathSync(file), join(root, at));
}

/** `names` and every package they depend on (optional ones where installed), as top-level node_modules folders. */
function closure(names: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !existsSync(join(NODE_MODULES, name, 'package.json'))) return;
    seen.add(name);
    const pkg = JSON.parse(readFileSync(join(NODE_MODULES, name, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) visit(dep);
  };
  for (const n of names) visit(n);
  return seen;
}

/** The Dockerfile: the root file system, the user, the volumes, the entrypoint. */
export function dockerfile(): string {
  return [
    'FROM scratch',
    'COPY rootfs/ /',
    `COPY --chown=${IMAGE_USER}:${IMAGE_USER} owned/ /`,
    `USER ${IMAGE_USER}:${IMAGE_USER}`,
    'ENV POOL_EXPORT_DATA_DIR=/data HOME=/data TMPDIR=/data/.tmp NODE_ENV=production',
    'WORKDIR /data',
    'VOLUME ["/data", "/config"]',
    'EXPOSE 9464',
    'ENTRYPOINT ["/usr/local/bin/node", "/app/bin/pool-export.js"]',
    'CMD ["schedule", "--metrics-port", "9464", "--metrics-host", "0.0.0.0"]',
    '',
  ].join('\n');
}

/** Assembles the build context in a temporary folder, builds the image with the Docker CLI, and returns its size. */
export function buildImage(tag = IMAGE): { name: string; bytes: number } {
  if (!existsSync(join(ROOT, 'dist/bin/pool-export.js')))
    throw new Error('no compiled command line in dist/bin: run `make build` first');
  const ctx = mkdtempSync(join(tmpdir(), 'pool-export-image-'));
  try {
    const rootfs = join(ctx, 'rootfs');
    const node = nodeBinary();
    place(rootfs, node, '/usr/local/bin/node');
    const addon = join(NODE_MODULES, '@duckdb/node-bindings-linux-x64/duckdb.node');
    for (const lib of new Set([...sharedLibraries(node), ...sharedLibraries(addon)]))
      if (!lib.startsWith(NODE_MODULES)) place(rootfs, lib);
    const app = join(rootfs, 'app');
    for (const f of ['bin/pool-export.js', 'package.json']) place(rootfs, join(ROOT, f), `/app/${f}`);
    cpSync(join(ROOT, 'dist/bin'), join(app, 'dist/bin'), { recursive: true });
    cpSync(join(ROOT, 'sql'), join(app, 'sql'), { recursive: true });
    for (const f of readdirSync(join(ROOT, 'src/schemas')).filter((n) => n.endsWith('.graphql')))
      place(rootfs, join(ROOT, 'src/schemas', f), `/app/src/schemas/${f}`);
    for (const name of closure(['@duckdb/node-api', 'apache-arrow']))
      cpSync(join(NODE_MODULES, name), join(app, 'node_modules', name), { recursive: true, dereference: true });
    // The dashboard reads one file of echarts (62 MB in all).
    for (const f of ['package.json', 'dist/echarts.common.min.js'])
      place(rootfs, join(NODE_MODULES, 'echarts', f), `/app/node_modules/echarts/${f}`);
    // The user's entries, so that tools that ask who runs them get an answer; the data folder, owned by that user.
    mkdirSync(join(rootfs, 'etc'), { recursive: true });
    writeFileSync(
      join(rootfs, 'etc/passwd'),
      `root:x:0:0::/:/sbin/nologin\npool-export:x:${IMAGE_USER}:${IMAGE_USER}::/data:/sbin/nologin\n`,
    );
    writeFileSync(join(rootfs, 'etc/group'), `root:x:0:\npool-export:x:${IMAGE_USER}:\n`);
    mkdirSync(join(rootfs, 'tmp'), { recursive: true, mode: 0o1777 });
    for (const d of ['data/.tmp', 'config']) mkdirSync(join(ctx, 'owned', d), { recursive: true });
    writeFileSync(join(ctx, 'Dockerfile'), dockerfile());
    // Docker's own output (a notice that the legacy builder is deprecated, where buildx is absent) only on failure.
    const built = spawnSync('docker', ['build', '--quiet', '--tag', tag, ctx], { encoding: 'utf8' });
    if (built.status !== 0)
      throw new Error(`docker build failed (exit ${built.status}): ${built.stderr || built.error}`);
    const bytes = Number(
      execFileSync('docker', ['image', 'inspect', '--format', '{{.Size}}', tag], { encoding: 'utf8' }),
    );
    return { name: tag, bytes };
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--tag');
  const { name, bytes } = buildImage(i > 0 ? process.argv[i + 1] : IMAGE);
  process.stdout.write(`${name} (${(bytes / 1024 ** 2).toFixed(0)} MiB)\n`);
}
