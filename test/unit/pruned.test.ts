/**
 * A deployment that keeps little history, as graph-node prunes one (`indexerHints: prune`, src/sandbox/prune.ts): the
 * sandbox's earliest block climbs as graph-node's does (checked block by block against a replay of its rule), a query
 * before it gets graph-node's text, and its manifest says the hint. The exporter takes that error as a moved floor: a
 * backfill of a real 46-entity schema (the corpus' graph-network, or the repository's fixture where the corpus is not
 * beside it) on a chain of a block every 100 ms that keeps 100 blocks moves its pin and exits 0, exact against the
 * sandbox's rows at each dataset's checkpointed block; `verify` exits 0, naming what it cannot check and why.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { RouteHealth } from '../../src/export/routing/route-health.ts';
import { earliestBlock, HISTORY_SLACK_FACTOR, parsePrune } from '../../src/sandbox/prune.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { indexedBlock } from '../../src/upstream/client.ts';
import { parseManifest } from '../../src/upstream/manifest.ts';
import { graphqlError, prunedFloor } from '../../src/upstream/upstream-error.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';

const CORPUS = resolve(fileURLToPath(new URL('../../..', import.meta.url)), 'shared', 'schemas', 'corpus');
const GRAPH_NETWORK = join(CORPUS, 'graphprotocol--graph-network-subgraph--graph-network.graphql');
const SCHEMA = existsSync(GRAPH_NETWORK)
  ? GRAPH_NETWORK
  : fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));

describe('the earliest block of a pruned deployment', () => {
  it("climbs as graph-node's rule does, block by block", () => {
    for (const history of [1, 7, 20, 100, 500]) {
      // The rule replayed: after each block written, prune when past the earliest by more than history × 1.2.
      let earliest = 1000;
      for (let head = 1000; head < 1000 + 40 * history; head++) {
        if (head > earliest + history * HISTORY_SLACK_FACTOR) earliest = head - history;
        expect(earliestBlock(1000, head, history), `history ${history}, head ${head}`).toBe(earliest);
      }
    }
  });

  it('takes never, auto or a number of blocks, and refuses the rest in one line', () => {
    expect(parsePrune('auto')).toBe('auto');
    expect(parsePrune('never')).toBe('never');
    expect(parsePrune('100')).toBe(100);
    for (const bad of ['0', '-5', '1.5', 'all', ''])
      expect(() => parsePrune(bad)).toThrow(/--prune takes never, auto or a number of blocks/);
  });

  it("reads a manifest's indexerHints.prune and an answer's graph-indexed header", () => {
    const manifest = (hints: string) =>
      `specVersion: 1.2.0\n${hints}schema:\n  file:\n    /: /ipfs/QmS\ndataSources:\n  - kind: ethereum\n    network: mainnet\n`;
    const history = (hints: string) => parseManifest(manifest(hints), 'QmM').history;
    expect(history('indexerHints:\n  prune: auto\n')).toBe(500);
    expect(history('indexerHints:\n  prune: 100\n')).toBe(100);
    expect(history('indexerHints:\n  prune: "250"\n')).toBe(250);
    for (const none of ['indexerHints:\n  prune: never\n', '', 'indexerHints:\n  prune: -3\n', 'indexerHints: 7\n'])
      expect(history(none), none).toBeUndefined();
    const headers = (v: string | null) => ({ get: () => v });
    expect(indexedBlock(headers('{"hash":"0xab","number":18432056,"timestamp":1767225600}'))).toBe(18432056);
    for (const bad of [null, 'null', '{"number":"7"}', 'not json', `{"number":1,"pad":"${'x'.repeat(600)}"}`])
      expect(indexedBlock(headers(bad)), String(bad)).toBeUndefined();
  });

  it("reads graph-node's text as a moved floor", () => {
    const e = graphqlError(
      [
        'Failed to decode `block.number` value: `subgraph QmX only has data starting at block number 1200 and data for block number 1100 is therefore not available`',
      ],
      200,
    );
    expect(e.kind).toBe('pruned');
    expect(e.retryable).toBe(false);
    expect(prunedFloor(new Error('wrapped', { cause: e }))).toBe(1200);
    expect(prunedFloor(graphqlError(['is therefore not yet available'], 200))).toBeUndefined();
  });
});

let sb: SandboxProcess;
let dir: string;

describe('a backfill of a deployment that keeps 100 blocks, on a chain of a block every 100 ms', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pe-pruned-'));
    sb = await startSandbox([
      ...['--scale', '20000', '--chains', '1', '--prune', '100', '--block-time', '100'],
      // 200 ms an answer: the backfill's 300-odd pages of 25, four tasks at a time, take at least 15 s however fast
      // the machine, past the 10 s of history kept (and the 7.5 s after which a task moves).
      ...['--latency-ms', '200'],
      ...['--subgraph', `gn=${SCHEMA}`],
    ]);
  }, 120_000);
  afterAll(async () => {
    await sb?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the hint in its manifest and refuses a block before its earliest with graph-node text', async () => {
    const url = /^subgraph gn: (\S+)$/m.exec(sb.banner)![1]!;
    const ask = async (query: string) =>
      (await (
        await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        })
      ).json()) as {
        data?: { _meta: { block: { number: number }; deployment: string } };
        errors?: { message: string }[];
      };
    const meta = (await ask('{ _meta { block { number } deployment } }')).data!._meta;
    const manifest = await (await fetch(`${sb.url}/ipfs/api/v0/cat?arg=${meta.deployment}`, { method: 'POST' })).text();
    expect(manifest).toMatch(/^indexerHints:\n {2}prune: 100$/m);
    const old = await ask(`{ _meta(block: { number: ${meta.block.number - 150} }) { block { number } } }`);
    expect(old.errors?.[0]?.message).toMatch(
      new RegExp(
        `^Failed to decode \`block.number\` value: \`subgraph ${meta.deployment} only has data starting at block number \\d+ and data for block number ${meta.block.number - 150} is therefore not available\`$`,
      ),
    );
    expect(
      (await ask(`{ _meta(block: { number: ${meta.block.number - 50} }) { block { number } } }`)).data,
    ).toBeDefined();
  });

  it('moves its pin, exits 0 and is exact; verify exits 0, naming what it cannot check', async () => {
    const url = /^subgraph gn: (\S+)$/m.exec(sb.banner)![1]!;
    const data = join(dir, 'data');
    // A folder of one subgraph, added from its deployment's own files; no DODO key.
    const env = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
    // Pages of 25 rows, each committed: passes span many blocks, so the pin moves in the middle of them.
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ pageSize: 25, batchRows: 25 }));
    const add = await cli(['subgraph', 'add', 'gn', '--chain', 'ethereum', '--url', url], env);
    expect(add.code, add.stderr).toBe(0);
    // The hint is read from the deployment's manifest and kept with the deployment.
    const kept = JSON.parse(readFileSync(join(data, 'subgraphs.json'), 'utf8')) as {
      subgraphs: { deployments: { history?: number }[] }[];
    };
    expect(kept.subgraphs[0]!.deployments[0]!.history).toBe(100);
    for (const pass of ['backfill', 'next run']) {
      await sb.control('stats', {});
      const r = await cli(['run', '--config', config, '--log-format', 'json'], env);
      expect(r.code, `${pass}: ${r.stderr.slice(-2000)}`).toBe(0);
      if (pass === 'backfill') expect(r.stderr, 'the pin moved').toMatch(/"event":"pin-moved"/);
      // The next run and verify need no slow answers: what they test does not hang on their length.
      await sb.control('faults', { latencyMs: 0 });
      // Each task moved before its block was pruned: the answers' graph-indexed header told it the head's pace.
      const { pruned } = await sb.control<{ pruned: number }>('stats');
      expect(pruned, `${pass}: queries at a pruned block`).toBeLessThanOrEqual(0);
      loadConfig({ env });
      const datasets = DATASETS.filter((d) => d.schema === 'gn').map((d) => d.name);
      const { mismatches, checked } = await compareWithSandbox(sb, data, [1], datasets);
      expect(checked, pass).toBe(datasets.length);
      expect(mismatches, pass).toEqual([]);
    }
    const v = await cli(['verify'], env);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    for (const line of (v.stdout + v.stderr).split('\n').filter((l) => l.startsWith('not checked')))
      expect(line).toMatch(
        /keeps only recent history \(its manifest's indexerHints\.prune\) and holds blocks from \d+ on/,
      );
    // 200 blocks on, every checkpointed block is past the history kept: both kinds of verify name each dataset as
    // not checked, and, the hint being known, ask nothing at a pruned block.
    await sb.control('advance', { blocks: 200 });
    await sb.control('stats', {});
    for (const args of [['verify'], ['verify', '--values']]) {
      const late = await cli(args, env);
      expect(late.code, late.stdout + late.stderr).toBe(0);
      const notChecked = (late.stdout + late.stderr).split('\n').filter((l) => l.startsWith('not checked'));
      expect(notChecked.length, args.join(' ')).toBeGreaterThan(0);
      for (const line of notChecked) expect(line).toMatch(/keeps only recent history/);
      expect((await sb.control<{ pruned: number }>('stats')).pruned, `${args.join(' ')}: asked at a pruned block`).toBe(
        0,
      );
    }
  }, 240_000);
});

describe("a run's knowledge of how far a route has indexed", () => {
  it('moves on at the pace its answers showed, and only forward', () => {
    const h = new RouteHealth();
    const url = 'http://127.0.0.1:1/subgraphs/name/gn/ethereum';
    expect(h.indexed(url, undefined, 0)).toBeUndefined();
    // 10 blocks a second seen between two answers: 2.5 s after the last, 25 blocks more.
    expect(h.indexed(url, 1000, 0)).toBe(1000);
    expect(h.indexed(url, 1020, 2000)).toBe(1020);
    expect(h.indexed(url, undefined, 4500)).toBe(1045);
    // An older answer (a task's request that was slow) does not take the head back.
    expect(h.indexed(url, 1010, 4500)).toBe(1045);
    expect(h.indexed('http://127.0.0.1:1/other', undefined, 4500)).toBeUndefined();
  });
});
