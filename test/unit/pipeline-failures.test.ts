/**
 * The exporter's whole run called in-process (`runOnce`, as test/unit/pipeline.test.ts says) against a real sandbox
 * process and real DuckDB files, when the upstream or the folder is in the way: a refused key, an entity a deployment
 * lacks, indexing errors, a host that cannot be reached or dies, a stop before the start, and a folder held by another
 * run.
 */

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SandboxEndpoint } from '../../src/sandbox/spawn.ts';
import { lockDataDir } from '../../src/store/data-lock.ts';
import { readStatusFile } from '../../src/store/status-file.ts';
import { killOnStart } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import {
  CHAIN,
  exportOnce,
  folder,
  type Logged,
  sb,
  usePipelineFixture,
  withOwnSandbox,
  withWarehouse,
} from '../support/pipeline-fixture.ts';
import { freePort } from '../support/ports.ts';
import { SHARED_SANDBOX_FLAGS } from '../support/shared-sandbox.ts';

usePipelineFixture();

describe('one run in-process', () => {
  it('an upstream that refuses the key fails every task with its class, stores no row, and the ledger says so', async () => {
    const data = folder();
    const { outcome } = await exportOnce(data, {
      overrides: { apiKey: 'not-the-key-0123456789abcdef0123' },
      datasets: ['dodoex.swaps', 'dodoex.pairs'],
    });
    expect(outcome.results.map((r) => [r.status, r.error?.cls])).toEqual([
      ['failed', 'upstream-auth'],
      ['failed', 'upstream-auth'],
    ]);
    for (const r of outcome.results) expect(r.error!.message).not.toContain('not-the-key');
    await withWarehouse(data, async (w) => {
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps')).toEqual([{ n: 0 }]);
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM _pool_export.checkpoints')).toEqual([{ n: 0 }]);
      expect(await w.all('SELECT status, failed::INTEGER AS failed FROM _pool_export.runs')).toEqual([
        { status: 'failed', failed: 2 },
      ]);
    });
    const status = readStatusFile(data)!;
    expect(status.entries.map((e) => [e.dataset, e.lastStatus, e.lastSuccess, e.rows])).toEqual([
      ['dodoex.pairs', 'failed', null, 0],
      ['dodoex.swaps', 'failed', null, 0],
    ]);
  });

  it('a deployment that lacks an entity skips its dataset as unavailable, asks nothing for it in a batch, and exports the others', async () => {
    await withOwnSandbox(
      async (own) => {
        const data = folder();
        const datasets = ['dodoex.positive_slippages', 'dodoex.swaps'];
        const { outcome, events } = await exportOnce(data, { datasets, sandbox: own });
        const [skipped, swaps] = datasets.map((d) => outcome.results.find((r) => r.task.ds.name === d)!);
        const message = `dodoex.positive_slippages on bsc: unavailable: the dodoex deployment at ${skipped!.task.endpoint.label} has no PositiveSlippage entity (older deployments lack some); skipped there`;
        expect(skipped).toMatchObject({
          status: 'unavailable',
          block: swaps!.block,
          cursorBefore: null,
          cursorAfter: null,
          error: { cls: 'unavailable', message },
          stats: { rows: 0, pages: 0, requests: 0 },
        });
        expect(swaps!.status).toBe('ok');
        const warned = events.filter((e) => e.level === 'warn');
        expect(warned).toEqual([
          {
            event: 'task-unavailable',
            fields: {
              dataset: 'dodoex.positive_slippages',
              chain: 'bsc',
              chainId: CHAIN,
              entity: 'PositiveSlippage',
              deployment: expect.any(String),
              message,
            },
            level: 'warn',
          },
        ]);
        expect(events.filter((e) => e.event === 'task-start').map((e) => e.fields.dataset)).toEqual(['dodoex.swaps']);
        expect((await compareWithSandbox(own, data, [CHAIN], ['dodoex.swaps'])).mismatches).toEqual([]);
        await withWarehouse(data, async (w) => {
          expect(await w.all('SELECT dataset, status, error FROM _pool_export.run_tasks ORDER BY dataset')).toEqual([
            { dataset: 'dodoex.positive_slippages', status: 'unavailable', error: message },
            { dataset: 'dodoex.swaps', status: 'ok', error: null },
          ]);
        });
        // A folder whose last run read both on a deployment that had the entity (the shared sandbox, the same world):
        // after new blocks on the one that lacks it, the batch of first pages asks only for swaps, there being no field
        // to ask the other's in.
        const moved = folder();
        const before = await exportOnce(moved, { datasets });
        expect(before.outcome.results.map((r) => r.status)).toEqual(['ok', 'ok']);
        await own.control('advance', { blocks: 100 });
        const next = await exportOnce(moved, { datasets, sandbox: own });
        expect(next.outcome.results.map((r) => [r.task.ds.name, r.status])).toEqual([
          ['dodoex.positive_slippages', 'unavailable'],
          ['dodoex.swaps', 'ok'],
        ]);
        expect(next.events.filter((e) => e.event === 'first-pages').map((e) => e.fields)).toEqual([
          expect.objectContaining({ datasets: 1, answered: 1, requests: 1 }),
        ]);
        expect((await compareWithSandbox(own, moved, [CHAIN], ['dodoex.swaps'])).mismatches).toEqual([]);
      },
      [...SHARED_SANDBOX_FLAGS, '--profile', 'gateway'],
    );
  });

  it('a subgraph that reports indexing errors fails its tasks before reading a page, naming the chain and schema', async () => {
    await withOwnSandbox(async (own) => {
      await own.control('garbage', { mode: 'indexing-errors' });
      const data = folder();
      const { outcome, events } = await exportOnce(data, { datasets: ['dodoex.swaps', 'dodoex.pairs'], sandbox: own });
      const why =
        'the block lookup failed: the dodoex subgraph of bsc reports indexing errors, so its data may be incomplete; these datasets are skipped until it recovers';
      const byName = [...outcome.results].sort((a, b) => a.task.ds.name.localeCompare(b.task.ds.name));
      expect(byName.map((r) => [r.status, r.error, r.block, r.stats.requests])).toEqual([
        ['failed', { cls: 'upstream-graphql', message: `dodoex.pairs on bsc: ${why}` }, null, 0],
        ['failed', { cls: 'upstream-graphql', message: `dodoex.swaps on bsc: ${why}` }, null, 0],
      ]);
      expect(events.filter((e) => e.level === 'error').map((e) => [e.event, e.fields.errorClass])).toEqual([
        ['task-failed', 'upstream-graphql'],
        ['task-failed', 'upstream-graphql'],
      ]);
      expect(events.at(-1)).toMatchObject({ event: 'run-done', fields: { failed: 2, rows: 0 } });
      await withWarehouse(data, async (w) => {
        expect(await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps')).toEqual([{ n: 0 }]);
      });
    });
  });

  it('a host that cannot be reached is tried three times with one endpoint, then fails every task in one line', async () => {
    const closed = await freePort();
    const down: SandboxEndpoint = { url: `http://127.0.0.1:${closed}`, apiKey: sb.apiKey, control: sb.control };
    const data = folder();
    const datasets = ['dodoex.swaps', 'token.tokens', 'list.liquidity'];
    const { outcome, events } = await exportOnce(data, { datasets, sandbox: down });
    const unreachable = events.filter((e) => e.event === 'host-unreachable');
    // Two endpoints probed on the host: the exchange subgraph (whose probe the list shares) and the token subgraph.
    expect(unreachable).toEqual([
      {
        event: 'host-unreachable',
        fields: { host: `127.0.0.1:${closed}`, endpoints: 2, error: expect.stringContaining('127.0.0.1') },
        level: 'error',
      },
    ]);
    expect(events.filter((e) => e.event === 'retry').map((e) => e.fields.attempt)).toEqual([1, 2]);
    const messages = outcome.results.map((r) => r.error!.message.replace(/^\S+ on bsc: /, ''));
    expect(new Set(messages)).toEqual(new Set([unreachable[0]!.fields.error]));
    expect(outcome.results.map((r) => [r.task.ds.name, r.status, r.error!.cls]).sort()).toEqual(
      datasets.map((d) => [d, 'failed', 'upstream-unreachable']).sort(),
    );
  });

  it('a host that dies after the probe fails its tasks with its own error, and with one route moves them nowhere', async () => {
    await withOwnSandbox(async (own) => {
      // The host dies once the run has probed it and planned its tasks, before their first pages.
      const { progress, killed } = killOnStart(own);
      const data = folder();
      const { outcome, events } = await exportOnce(data, {
        datasets: ['dodoex.swaps'],
        overrides: { maxAttempts: 2 },
        sandbox: own,
        progress,
      });
      await killed();
      const [swaps] = outcome.results;
      expect([swaps!.status, swaps!.error!.cls, swaps!.failovers]).toEqual([
        'failed',
        'upstream-unreachable',
        undefined,
      ]);
      expect(swaps!.error!.message).toContain(
        `dodoex.swaps on bsc: the upstream host ${new URL(own.url).host} could not be reached`,
      );
      expect(events.filter((e) => e.event.startsWith('failover'))).toEqual([]);
    });
  });

  it('a run asked to stop before it starts ends stopped, with nothing half-written, and the next run completes it', async () => {
    const data = folder();
    const stop = new AbortController();
    stop.abort();
    const { outcome } = await exportOnce(data, { signal: stop.signal, datasets: ['dodoex.swaps'] });
    expect(outcome.stopped).toBe(true);
    // A task not started before the stop is left out: no result, no ledger row.
    expect(outcome.results).toEqual([]);
    await withWarehouse(data, async (w) => {
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM _pool_export.run_tasks')).toEqual([{ n: 0 }]);
      expect(await w.all('SELECT status FROM _pool_export.runs')).toEqual([{ status: 'stopped' }]);
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps')).toEqual([{ n: 0 }]);
    });
    const again = await exportOnce(data, { datasets: ['dodoex.swaps'] });
    expect(again.outcome.stopped).toBe(false);
    expect((await compareWithSandbox(sb, data, [CHAIN], ['dodoex.swaps'])).mismatches).toEqual([]);
  });

  it('a scheduled run finds the folder held by a manual run: it says so, waits, and runs once the lock is free', async () => {
    const data = folder();
    const manual = await lockDataDir(data, { what: 'run of events', waitSecs: 0, onLost: () => {} });
    let waiting!: (e: Logged) => void;
    const waitSeen = new Promise<Logged>((r) => (waiting = r));
    const run = exportOnce(data, {
      datasets: ['dodoex.pairs'],
      waitLockSecs: 60,
      onEvent: (e) => e.event === 'lock-wait' && waiting(e),
    });
    const wait = await waitSeen;
    expect(wait.fields).toEqual({ owner: expect.stringMatching(/^pid \d+, run of events, since /), waitSecs: 60 });
    // Nothing of the run happened while the lock was held.
    expect(readdirSync(data)).not.toContain('warehouse.duckdb');
    await manual.release();
    const { outcome, events } = await run;
    expect(outcome.results.map((r) => r.status)).toEqual(['ok']);
    expect(events.map((e) => e.event).indexOf('lock-wait')).toBeLessThan(
      events.map((e) => e.event).indexOf('run-start'),
    );
    expect((await compareWithSandbox(sb, data, [CHAIN], ['dodoex.pairs'])).mismatches).toEqual([]);
  });
});
