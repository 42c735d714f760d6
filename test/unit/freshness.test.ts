/**
 * Freshness as `status` and the dashboard state it: lag from the committed block to a reference time, and staleness;
 * the heads of a dataset's routes, read from the shared sandbox and checked against its control API's own heads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { callControl } from '../../src/sandbox/spawn.ts';
import { freshest, freshnessOf, isStale, lagSeconds, readHeads } from '../../src/store/freshness.ts';
import type { StatusEntry } from '../../src/store/status-entries.ts';
import { headRoutesFor } from '../../src/upstream/routes.ts';
import { sandboxEnv } from '../support/cli-process.ts';
import { freePort, silentServer } from '../support/ports.ts';

/** 2026-01-01T00:00:00Z in Unix seconds. */
const T = 1_767_225_600;

describe('freshness', () => {
  it('lag is whole seconds from the block to the reference, never below 0, null without a block', () => {
    expect(lagSeconds('2026-01-01T00:00:00.000Z', T + 90)).toBe(90);
    expect(lagSeconds('2026-01-01T00:00:00.600Z', T + 90)).toBe(89);
    // A head behind the committed block (another route, a clock off): no negative lag.
    expect(lagSeconds('2026-01-01T00:10:00Z', T)).toBe(0);
    expect(lagSeconds(null, T)).toBeNull();
  });

  it('stale: never succeeded, lag unknown, or over the limit; an unavailable dataset never', () => {
    const ok = { lastSuccess: '2026-01-01T00:00:00Z', lastStatus: 'ok' };
    expect(isStale(ok, 7200, 7200)).toBe(false);
    expect(isStale(ok, 7201, 7200)).toBe(true);
    expect(isStale(ok, null, 7200)).toBe(true);
    expect(isStale({ lastSuccess: null, lastStatus: 'failed' }, 0, 7200)).toBe(true);
    expect(isStale({ lastSuccess: null, lastStatus: 'unavailable' }, null, 7200)).toBe(false);
  });
});

describe('the heads of routes', () => {
  const { url, apiKey } = inject('sharedSandbox');
  const dataDir = mkdtempSync(join(tmpdir(), 'pe-fresh-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const configFor = (env: Record<string, string>) => loadConfig({ env, overrides: { chains: ['56'] } });
  /** The environment of a data folder reading `base` with the sandbox's key. */
  const keyed = (base: string) => sandboxEnv({ url: base, apiKey }, dataDir);
  const swaps = { dataset: 'dodoex.swaps', chainId: 56 };
  /** The sandbox's head of chain 56, from its control API rather than a subgraph query. */
  const sandboxHead = async () => {
    const info = await callControl<{ chains: { chainId: number; head: number; timestamp: number }[] }>(url, 'info');
    return info.chains.find((c) => c.chainId === 56)!;
  };

  it('reads the head of each route once, by its URL, and states a dataset against the freshest', async () => {
    const config = configFor(keyed(url));
    const keys = [swaps, { dataset: 'dodoex.pairs', chainId: 56 }];
    const { heads, why } = await readHeads(config, keys);
    const want = await sandboxHead();
    const routes = headRoutesFor(config, findDataset('dodoex.swaps')!, 56);
    expect(why).toBeUndefined();
    // Both datasets are of one deployment: one route, one head.
    expect([...heads.keys()]).toEqual(routes.map((r) => r.url));
    expect(heads.get(routes[0]!.url)).toEqual({ number: want.head, timestamp: want.timestamp });
    const entry: StatusEntry = {
      ...swaps,
      lastSuccess: '2026-01-01T00:00:00Z',
      lastStatus: 'ok',
      lastError: null,
      rows: 1,
      block: want.head - 25,
      blockTime: new Date((want.timestamp - 300) * 1000).toISOString(),
    };
    expect(freshnessOf(config, entry, { heads, nowSecs: want.timestamp + 9999, staleAfterSecs: 7200 })).toEqual({
      upstreamBlock: want.head,
      lagBlocks: 25,
      lagSeconds: 300,
      stale: false,
    });
    // Without a committed block there is no lag in blocks; without a head, no upstream block, and the lag runs to now.
    expect(freshnessOf(config, { ...entry, block: null }, { heads, nowSecs: 0, staleAfterSecs: 7200 }).lagBlocks).toBe(
      null,
    );
    expect(
      freshnessOf(config, entry, { heads: new Map(), nowSecs: want.timestamp + 60, staleAfterSecs: 7200 }),
    ).toEqual({ upstreamBlock: null, lagBlocks: null, lagSeconds: 360, stale: false });
    // A dataset this version does not know (an older status file's) has no route, so no head.
    expect(
      freshnessOf(config, { ...entry, dataset: 'gone.entity' }, { heads, nowSecs: 0, staleAfterSecs: 7200 })
        .upstreamBlock,
    ).toBeNull();
  });

  it('says why no head was read: no key, or every request failed (the key kept out of the reason)', async () => {
    const noKey = await readHeads(configFor({ POOL_EXPORT_BASE_URL: url, POOL_EXPORT_DATA_DIR: dataDir }), [swaps]);
    expect(noKey).toEqual({
      heads: new Map(),
      why: 'no API key is set (POOL_EXPORT_API_KEY), so the upstream was not asked for its head',
    });
    // A port nothing listens on: one the system gave and took back.
    const port = await freePort();
    const down = await readHeads(configFor(keyed(`http://127.0.0.1:${port}`)), [swaps]);
    expect(down.heads.size).toBe(0);
    expect(down.why).toMatch(new RegExp(`^the upstream's head could not be read \\(.*127\\.0\\.0\\.1:${port}.*\\)$`));
    expect(down.why).not.toContain(apiKey);
    // No route asked, nothing failed: no reason either.
    expect(await readHeads(configFor(keyed(url)), [])).toEqual({ heads: new Map() });
  });

  it('bounds a head read at 10 s whatever the time-out of pages, and ends it at a stop', async () => {
    // A route that takes the connection and never answers.
    const silent = await silentServer();
    const base = `http://127.0.0.1:${silent.port}`;
    try {
      const config = loadConfig({ env: keyed(base), overrides: { chains: ['56'], timeoutMs: 60_000, maxAttempts: 1 } });
      expect((await readHeads(config, [swaps])).why).toMatch(/no answer within 10000 ms/);
      const stop = new AbortController();
      silent.server.once('connection', () => stop.abort());
      expect((await readHeads(config, [swaps], { signal: stop.signal })).why).toMatch(/\(stopped on request\)$/);
    } finally {
      await silent.close();
    }
  });

  it('the freshest head is the highest block; of two at one block, the first read', () => {
    const a = { number: 9, timestamp: 1 };
    expect(
      freshest([undefined, { number: 5, timestamp: 5 }, a, { number: 9, timestamp: 2 }, { number: 7, timestamp: 7 }]),
    ).toBe(a);
    expect(freshest([undefined, undefined])).toBeUndefined();
    expect(freshest([])).toBeUndefined();
  });
});
