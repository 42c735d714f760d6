#!/usr/bin/env node
// Entry point. Runs the compiled bundle, dist/bin/pool-export.js, which `npm ci` builds (the `prepare` step) and `make`
// renews; when a source is newer than the bundle (a checkout being edited), or there is none, it runs the TypeScript
// through tsx instead, so a stale bundle never runs. bin/main.ts hands the command line the jobs of jobs/.
import { existsSync, readdirSync, statSync } from 'node:fs';

// Node.js 22 and 24 are the lines tested (`make test` on 24, `make test-node22` on 22); older ones have ended.
if (Number(process.versions.node.split('.')[0]) < 22) {
  process.stderr.write(
    `pool-export needs Node.js 22 or later, and this is ${process.version}: run it as \`npx pool-export …\` in the project's folder (\`make install\` puts Node 24 in node_modules/node24/bin), or install Node 22 or 24\n`,
  );
  process.exit(2);
}

const root = new URL('../', import.meta.url);
const bundle = new URL('dist/bin/pool-export.js', root);

/**
 * The newest modification time of the sources the bundle is made of (TypeScript, and the JSON files it imports); 0 in a
 * copy that ships only the bundle (the container image), which then always runs it.
 */
function newestSource() {
  if (!existsSync(new URL('bin/main.ts', root))) return 0;
  let newest = statSync(new URL('bin/main.ts', root)).mtimeMs;
  for (const dir of ['src', 'jobs']) {
    for (const e of readdirSync(new URL(`${dir}/`, root), { recursive: true, withFileTypes: true })) {
      if (e.isFile() && (e.name.endsWith('.ts') || e.name.endsWith('.json')))
        newest = Math.max(newest, statSync(`${e.parentPath}/${e.name}`).mtimeMs);
    }
  }
  return newest;
}

if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
