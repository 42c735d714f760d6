/** The human summary of a run, printed by `run` and logged by `schedule`. */
import { chainName } from '../config/chains.ts';
import { isStopped, type TaskResult } from '../export/task.ts';
import { tableLines } from '../util/display.ts';
import { inert } from '../util/inert.ts';
import { cause } from '../util/logger.ts';
import { wrap } from '../util/wrap.ts';

/** A task a stop request ended before it was done (recorded as failed, with the error class `stopped`). */

/** A task that failed on its own. */
const isFailure = (r: TaskResult) => r.status === 'failed' && r.error?.cls !== 'stopped';

/**
 * The human summary of a run: rows, pages and requests per dataset (summed over its chains; per dataset and chain with
 * `byChain`), totals, datasets unavailable upstream, and one line per distinct failure. Tasks with nothing new, and
 * tasks that failed before they read anything, are left out of the table (with no table at all when none is left). The table's columns are as wide as their contents (a typical table fits 80 columns); with
 * `width` (a terminal's), the lines of prose below it are wrapped to it, every word kept.
 */
export function summary(results: readonly TaskResult[], opts: { byChain?: boolean; width?: number } = {}): string {
  const groups = new Map<string, TaskResult[]>();
  for (const r of results) {
    // A task that failed before it read anything is told by its FAILED line alone: one cause (a refused key) that
    // fails 41 datasets is one line, not a table of 41 rows saying "failed".
    const failedBare = isFailure(r) && r.stats.rows === 0 && r.stats.pages === 0;
    if ((r.stats.rows === 0 && r.status === 'ok') || r.status === 'unavailable' || failedBare) continue;
    const key = opts.byChain ? `${r.task.ds.name}\u0000${chainName(r.task.chainId)}` : r.task.ds.name;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rows: string[][] = [['dataset', opts.byChain ? 'chain' : 'chains', 'rows', 'pages', 'requests', 'status']];
  for (const [key, rs] of groups) {
    const [name, chain] = key.split('\u0000') as [string, string | undefined];
    const add = (k: 'rows' | 'pages' | 'requests') => String(rs.reduce((a, r) => a + r.stats[k], 0));
    const failed = rs.filter(isFailure).length;
    const stopped = rs.filter(isStopped).length;
    const status =
      failed + stopped === 0
        ? 'ok'
        : [
            ...(failed ? [rs.length === 1 ? 'failed' : `${failed} failed`] : []),
            ...(stopped ? [rs.length === 1 ? 'stopped' : `${stopped} stopped`] : []),
          ].join(', ');
    rows.push([name, chain ?? String(rs.length), add('rows'), add('pages'), add('requests'), status]);
  }
  // Laid out as every table of the command line is (`util/display.ts`): widths in terminal cells, counts right-aligned.
  const [head, ...body] = rows;
  const lines = tableLines(head!, body, { right: [false, false, true, true, true, false] });
  const prose: string[] = [];
  const sum = (k: 'rows' | 'requests' | 'retries' | 'pages' | 'duplicates') =>
    results.reduce((a, r) => a + r.stats[k], 0);
  const failed = results.filter(isFailure);
  const stopped = results.filter(isStopped);
  const unavailable = results.filter((r) => r.status === 'unavailable');
  const ok = results.filter((r) => r.status === 'ok');
  const parts = [
    `${ok.length} ok`,
    `${failed.length} failed`,
    ...(stopped.length ? [`${stopped.length} stopped on request`] : []),
    ...(unavailable.length ? [`${unavailable.length} unavailable`] : []),
    `${ok.filter((r) => r.stats.rows === 0).length} with no new rows`,
  ];
  prose.push(
    `${results.length} tasks (${parts.join(', ')}): ${sum('rows')} rows, ${sum('pages')} pages, ${sum('requests')} requests, ${sum('retries')} retries`,
  );
  if (unavailable.length) {
    const byDataset = new Map<string, string[]>();
    for (const r of unavailable)
      byDataset.set(r.task.ds.name, [...(byDataset.get(r.task.ds.name) ?? []), chainName(r.task.chainId)]);
    prose.push(
      `unavailable (the upstream deployment has no such entity; skipped there, not a failure): ${[...byDataset].map(([d, c]) => `${d} on ${c.join(', ')}`).join('; ')}`,
    );
  }
  const dups = sum('duplicates');
  if (dups)
    prose.push(
      `${dups} rows repeated an id the upstream had already sent (an upstream defect): the newest of each was kept; the log's duplicate-ids events name them`,
    );
  for (const line of routeLines(results)) prose.push(line);
  for (const line of failureLines(failed)) prose.push(line);
  const fit = (line: string) => (opts.width ? wrap(line, { width: opts.width, indent: 2 }) : line);
  return [...(groups.size ? [...lines, ''] : []), ...prose.map(fit)].join('\n');
}

/**
 * A line per chain and schema whose tasks did not read from their first route (why each earlier route was passed
 * over), and one per failover of a task from one route to another (or refused).
 */
export function routeLines(results: readonly TaskResult[]): string[] {
  const out = new Map<string, string>();
  for (const r of results) {
    const views = r.routes ?? [];
    const first = views[0];
    const chosen = views.find((v) => v.state === 'chosen');
    if (first && chosen && first !== chosen) {
      const passed = views
        .slice(0, views.indexOf(chosen))
        .map((v) => `${v.label} ${v.state}${v.note ? ` (${v.note})` : ''}`)
        .join('; ');
      out.set(
        `${r.task.chainId}/${r.task.ds.schema}`,
        `route on ${chainName(r.task.chainId)}/${r.task.ds.schema}: read from ${chosen.label}; passed over ${passed}`,
      );
    }
  }
  const lines = [...out.values()].map(inert);
  for (const r of results)
    for (const f of r.failovers ?? [])
      lines.push(
        inert(
          f.refused
            ? `failover refused: ${r.task.ds.name} on ${chainName(r.task.chainId)} could not move from ${f.from} to ${f.to} at block ${f.block}: ${f.refused}`
            : `failover: ${r.task.ds.name} on ${chainName(r.task.chainId)} moved from ${f.from} to ${f.to} at block ${f.block} after: ${f.reason}`,
        ),
      );
  return lines;
}

/** Names a few things, or counts many: `a, b, c` or `41 datasets`. */
function few(items: readonly string[], what: string): string {
  return items.length <= 4 ? items.join(', ') : `${items.length} ${what}`;
}

/**
 * One FAILED line per distinct failure: tasks that failed alike (every dataset behind an unreachable host, say) share
 * one line that names them, or counts them, instead of one line each.
 */
export function failureLines(failed: readonly TaskResult[]): string[] {
  // Grouped by cause: the same failure of one host reads alike for every chain and subgraph behind it (`cause`), and
  // a group of several routes is said with the host alone.
  const groups = new Map<string, { rests: Set<string>; tasks: TaskResult[] }>();
  for (const f of failed) {
    const prefix = `${f.task.ds.name} on ${chainName(f.task.chainId)}: `;
    const message = f.error?.message ?? 'failed';
    const rest = message.startsWith(prefix) ? message.slice(prefix.length) : message;
    const g = groups.get(cause(rest)) ?? { rests: new Set<string>(), tasks: [] };
    g.rests.add(rest);
    g.tasks.push(f);
    groups.set(cause(rest), g);
  }
  return [...groups].map(([key, { rests, tasks }]) => {
    const rest = rests.size === 1 ? [...rests][0]! : key;
    if (tasks.length === 1) return `FAILED ${inert(tasks[0]!.error?.message ?? rest)}`;
    const datasets = [...new Set(tasks.map((t) => t.task.ds.name))].sort();
    const chains = [...new Set(tasks.map((t) => chainName(t.task.chainId)))].sort();
    return `FAILED ${tasks.length} tasks (${few(datasets, 'datasets')} on ${few(chains, 'chains')}): ${inert(rest)}`;
  });
}
