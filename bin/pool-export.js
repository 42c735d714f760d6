#!/usr/bin/env node
// Entry point. Runs the compiled bundle, dist/bin/pool-export.js, which `npm ci` builds (the `prepare` step) and `make`
// renews; when a source is newer than the bundle (a checkout being edited), or there is none, it runs the TypeScript
// through tsx instead, so a stale bundle never runs. bin/main.ts hands the command line the jobs of jobs/.
import { existsSync, readdirSync, statSync } from 'node:fs';

// Node.js 22 and 24 are the lines tested (`make test` on 24, `make test-node22` on 22); older ones have ended. On an
// older one, the tool runs on the Node 24 that `npm install` put in node_modules/node24 (the optional dependency
// `node24`), as its child: `node bin/pool-export.js …` works as written wherever the machine's own Node is older.
const older = Number(process.versions.node.split('.')[0]) < 22;
const own = new URL('../node_modules/node24/bin/node', import.meta.url);
if (older && !existsSync(own)) {
  process.stderr.write(
    `pool-export needs Node.js 22 or later, and this is ${process.version}: run \`npm install\` (or \`make install\`) in the project's folder, which puts Node 24 in node_modules/node24/bin, or install Node 22 or 24\n`,
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

if (older) {
  // The child runs in its own process group, so that a Ctrl-C reaches it once (passed on by this process), not twice
  // (a second signal stops a run at once); should this process be killed outright, the tool notices that its parent
  // is gone and stops as if signalled (src/cli/launcher.ts).
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const child = spawn(fileURLToPath(own), [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    detached: true,
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const pass = (signal) => child.kill(signal);
  for (const s of signals) process.on(s, pass);
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, pass);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
} else if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()) {
  await import(bundle.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
