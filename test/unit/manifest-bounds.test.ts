/**
 * A deployment's files from a hostile IPFS endpoint cost their bounds, never the command's memory or its event loop
 * (`src/upstream/bounded-parse.ts`): a manifest past 1 MiB is refused by size, one that nests past the parse's memory
 * or takes past its time is refused naming the bound, the first SIGTERM ends `subgraph add` at once, and a read that
 * stalls or is cut off is named as such. Every refusal is one line, exit code 2, with nothing written. The endpoint is
 * an HTTP server here whose path prefix picks its answer; the deployment's `_meta` comes from the sandbox.
 */
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { parseManifestBounded } from '../../src/upstream/bounded-parse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
/** A YAML mapping of 100,000 keys (under 1 MiB): the YAML parser takes minutes over it. */
const KEYS = Array.from({ length: 100_000 }, (_, i) => `k${i}: v`).join('\n');

let sb: SandboxProcess;
let dir: string;
let url: string;
let ipfs: Server;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '500', '--chains', '1', '--subgraph', `pools=${FIXTURE}`]);
  url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
  dir = mkdtempSync(join(tmpdir(), 'pe-manifest-'));
  ipfs = createServer((req, res) => {
    const mode = req.url!.split('/')[1];
    if (mode === 'big') return res.end('a: b\n'.repeat(300_000));
    if (mode === 'deep') return res.end('['.repeat(1_000_000));
    if (mode === 'keys') return res.end(KEYS);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('specVersion: 0.0.5\n');
    // `stall` sends no more; `cut` is reset mid-body.
    if (mode === 'cut') setTimeout(() => res.socket?.destroy(), 100);
  });
  ipfs.listen(0, '127.0.0.1');
  await once(ipfs, 'listening');
});
afterAll(async () => {
  await sb?.stop();
  ipfs?.closeAllConnections();
  ipfs?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ipfsAt = (mode: string) => `http://127.0.0.1:${(ipfs.address() as AddressInfo).port}/${mode}/`;

/** `subgraph add` with the deployment's files from the endpoint's `mode`. */
function add(mode: string, extra: string[] = [], opts: Parameters<typeof cli>[2] = {}) {
  const data = join(dir, `${mode}-${Math.random()}`);
  const args = ['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url, '--ipfs', ipfsAt(mode), ...extra];
  return { data, run: cli(args, sandboxEnv(sb, data), opts) };
}

describe('a hostile manifest', () => {
  it.each([
    ['past 1 MiB', 'big', [], /^pool-export: Qm\w+ from \S+ is larger than 1 MiB: it is no subgraph's file$/],
    [
      'that nests past the memory of its parse',
      'deep',
      [],
      /^pool-export: the manifest Qm\w+ takes more than 256 MiB( of nesting)? to read: it is no subgraph's file$/,
    ],
    [
      'that stalls',
      'stall',
      ['--timeout', '1'],
      /^pool-export: the IPFS endpoint \S+ could not give Qm\w+ \(no answer in 1 s\): check --ipfs, or give --schema FILE$/,
    ],
    [
      'that is cut off',
      'cut',
      [],
      /^pool-export: the IPFS endpoint \S+ could not give Qm\w+ \((terminated|other side closed)\): check --ipfs/,
    ],
  ])('%s is refused in one line naming why, with exit code 2 and nothing written', async (_, mode, extra, message) => {
    const { data, run } = add(mode, extra);
    const r = await run;
    expect(r.stderr.trim()).toMatch(message);
    expect(r.code).toBe(2);
    expect(existsSync(join(data, 'subgraphs.json'))).toBe(false);
  });

  it('that takes past its time to parse is refused naming the bound, and the parse ends with it', async () => {
    const started = Date.now();
    await expect(parseManifestBounded(KEYS, 'QmKeys', { secs: 1 })).rejects.toThrow(
      new UsageError("the manifest QmKeys takes more than 1 s to read: it is no subgraph's file"),
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('is stopped by the first SIGTERM while it is parsed: the command ends by the signal, having written nothing', async () => {
    const { data, run } = add('keys', [], { termWhen: () => false, termAfterMs: 3000 });
    const r = await run;
    expect(r.signal ?? r.code).toMatch(/^(SIGTERM|143)$/);
    expect(r.stderr).toContain('SIGTERM: stopping; nothing is written');
    expect(existsSync(join(data, 'subgraphs.json'))).toBe(false);
  });
});
