/** The run summary's lines about routes: routes passed over at the start, and failovers during tasks. */
import { describe, expect, it } from 'vitest';
import { DATASETS, findDataset } from '../../src/catalog/catalog.ts';
import { routeLines, summary } from '../../src/cli/summary.ts';
import type { TaskResult } from '../../src/export/task.ts';
import { emptyStats } from '../../src/export/task.ts';

const endpoint = { url: 'u', label: 'A', host: 'h' };

function result(over: Partial<TaskResult>, dataset = 'dodoex.swaps'): TaskResult {
  return {
    task: { chainId: 56, ds: findDataset(dataset)!, endpoint, routes: [endpoint] },
    status: 'ok',
    stats: { ...emptyStats(), rows: 5, pages: 1, requests: 1 },
    block: 100,
    cursorBefore: null,
    cursorAfter: 'c',
    startedAt: new Date(0),
    endedAt: new Date(0),
    ...over,
  };
}

describe('route lines of the summary', () => {
  it('names the route read from and why the earlier ones were passed over, once per chain and schema', () => {
    const routes = [
      {
        label: 'A',
        head: 500,
        lagBlocks: 500,
        state: 'behind' as const,
        note: '500 blocks behind the freshest route (maxLagBlocks 50)',
      },
      { label: 'B\u001b[2J', head: 1000, lagBlocks: 0, state: 'chosen' as const, note: null },
      { label: 'C', head: 1000, lagBlocks: 0, state: 'standby' as const, note: null },
    ];
    const lines = routeLines([result({ routes }), result({ routes }, 'dodoex.pairs')]);
    expect(lines).toEqual([
      'route on bsc/dodoex: read from B\\x1b[2J; passed over A behind (500 blocks behind the freshest route (maxLagBlocks 50))',
    ]);
  });

  it('says nothing when the first route served, and one line per failover or refused move', () => {
    const first = [{ label: 'A', head: 1, lagBlocks: 0, state: 'chosen' as const, note: null }];
    expect(routeLines([result({ routes: first }), result({})])).toEqual([]);
    const failovers = [
      { from: 'A', to: 'B', block: 100, reason: 'A could not be reached' },
      { from: 'B', to: 'C', block: 100, reason: 'B timed out', refused: 'it is on another fork: …' },
    ];
    expect(routeLines([result({ failovers })])).toEqual([
      'failover: dodoex.swaps on bsc moved from A to B at block 100 after: A could not be reached',
      'failover refused: dodoex.swaps on bsc could not move from B to C at block 100: it is on another fork: …',
    ]);
    expect(summary([result({ failovers })])).toContain('\nfailover: dodoex.swaps on bsc moved from A to B');
  });
});

describe('tasks a stop request ended', () => {
  it('are counted as stopped, not failed, and get no FAILED line; a real failure beside them still does', () => {
    const stopped = (dataset: string) =>
      result(
        { status: 'failed', error: { cls: 'stopped', message: `${dataset} on bsc: stopped on request` } },
        dataset,
      );
    const text = summary([
      result({}),
      stopped('dodoex.pairs'),
      stopped('dodoex.tokens'),
      result({ status: 'failed', error: { cls: 'http', message: 'dodoex.users on bsc: HTTP 500' } }, 'dodoex.users'),
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^dataset +chains +rows +pages +requests +status$/);
    expect(lines.find((l) => l.startsWith('dodoex.pairs'))).toMatch(/ stopped$/);
    expect(lines.find((l) => l.startsWith('dodoex.users'))).toMatch(/ failed$/);
    expect(text).toContain('4 tasks (1 ok, 1 failed, 2 stopped on request, 0 with no new rows)');
    expect(lines.filter((l) => l.startsWith('FAILED'))).toEqual(['FAILED dodoex.users on bsc: HTTP 500']);
  });
});

describe('a run whose tasks all failed alike', () => {
  it('is the count and one FAILED line, with no table of datasets that read nothing', () => {
    const names = DATASETS.filter((d) => ['list', 'dodoex', 'token', 'mine'].includes(d.schema)).map((d) => d.name);
    const refused = 'the block lookup failed: the service at 127.0.0.1:1 refused the API key (HTTP 401)';
    const text = summary(
      names.map((d) =>
        result(
          { status: 'failed', stats: emptyStats(), error: { cls: 'auth', message: `${d} on bsc: ${refused}` } },
          d,
        ),
      ),
    );
    expect(text.split('\n')).toEqual([
      `${names.length} tasks (0 ok, ${names.length} failed, 0 with no new rows): 0 rows, 0 pages, 0 requests, 0 retries`,
      `FAILED ${names.length} tasks (${names.length} datasets on bsc): ${refused}`,
    ]);
  });
});
