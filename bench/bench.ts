import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { lakeBench } from './lake-bench.ts';
import { prunedBench } from './pruned-bench.ts';
import { reportOutputBench } from './report-output.ts';
import { allowance, base, memory, noop, startup, upload } from './run-sections.ts';
import { exportRun, fmt, lines, log, ONLY, QUICK, ROOT, target, targets, timed, work } from './suite.ts';
import { throughput } from './throughput.ts';

/** The lake's readers and runs (bench/lake-bench.ts). */
function lake(): Promise<void> {
  return lakeBench({
    quick: QUICK,
    work,
    log,
    exportRun,
    timed,
    line: (l) => lines.push({ section: 'lake: its readers and its runs', ...l }),
    target,
  });
}

/** A backfill of a deployment that prunes its history while its head moves (bench/pruned-bench.ts). */
function pruned(): Promise<void> {
  return prunedBench({
    quick: QUICK,
    work,
    log,
    line: (l) => lines.push({ section: 'pruned: a deployment that keeps little history', ...l }),
  });
}

/** Every report as a table and as CSV at a real chain's size (bench/report-output.ts). */
function reports(): Promise<void> {
  return reportOutputBench({
    quick: QUICK,
    work,
    log,
    exportRun,
    timed,
    line: (l) => lines.push({ section: 'reports: a table against CSV', ...l }),
    target,
  });
}

const started = new Date();
try {
  const sections: Record<string, () => Promise<void>> = {
    startup,
    throughput,
    allowance,
    memory,
    noop,
    base,
    upload,
    lake,
    pruned,
    reports,
  };
  const unknown = (ONLY ?? []).filter((k) => !(k in sections));
  if (unknown.length)
    throw new Error(
      `--only: unknown section ${unknown.join(', ')}; the sections are ${Object.keys(sections).join(', ')}`,
    );
  for (const [name, run] of Object.entries(sections)) if (!ONLY || ONLY.includes(name)) await run();
} finally {
  rmSync(work, { recursive: true, force: true });
}
const table = [
  `# pool-export benchmark (${QUICK ? 'quick' : 'full'}), ${started.toISOString().slice(0, 16)}Z, ${cpus().length} cores, Node ${process.version}`,
  '',
  '| measurement | what | rows | seconds | rows/s (or req/s) | ratio | note |',
  '|---|---|---:|---:|---:|---|---|',
  ...lines.map(
    (l) =>
      `| ${l.section} | ${l.what} | ${typeof l.rows === 'number' ? fmt(l.rows) : l.rows} | ${l.secs} | ${l.rate} | ${l.ratio} | ${l.note} |`,
  ),
  '',
  ...(targets.length
    ? [
        '## Targets',
        '',
        '| # | measurement | target | this run | met | room this run leaves |',
        '|---|---|---|---|---|---|',
        ...[...targets]
          .sort((a, b) => a.n - b.n)
          .map(
            (t) =>
              `| ${t.n} | ${t.what} | ${t.want} | ${t.got} | ${QUICK && t.sized ? '– (quick run: smaller size)' : t.met ? 'yes' : '**no**'} | ${t.room ?? ''} |`,
          ),
        '',
      ]
    : []),
].join('\n');
process.stdout.write(table);
const dir = join(ROOT, 'bench/results');
mkdirSync(dir, { recursive: true });
const file = join(
  dir,
  `${started.toISOString().slice(0, 10)}-${QUICK ? 'quick' : 'full'}${ONLY ? `-${ONLY.join('-')}` : ''}.md`,
);
writeFileSync(file, table);
log(`written to ${file}`);
