/**
 * Rows stored by DuckDB alone and by pool-export's own steps, apart from any upstream: the ceilings of the throughput
 * comparison (bench/throughput.ts), and a recording of the sandbox's answers replayed by a server of their own.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import bundleOptions from '../scripts/bundle-options.json' with { type: 'json' };
import { checkPage } from '../src/export/mapper.ts';
import { writePending } from '../src/lake/lake-writer.ts';
import { Warehouse } from '../src/store/warehouse.ts';
import { lit, qt } from '../src/util/sql.ts';
import { CHAIN, ceilingInsert, SWAPS } from './ceiling.ts';
import { type Cost, cost, ROOT, work } from './suite.ts';

/**
 * Times `sql` (which reads the rows file) on a fresh warehouse in `name`; `prepare` runs first, untimed, and the
 * steps of `after` follow it, each timed.
 */
export async function timedIngest<Step extends string = never>(
  name: string,
  sql: {
    prepare?: (w: Warehouse) => Promise<void>;
    run: string;
    count: string;
    after?: Record<Step, (w: Warehouse) => Promise<unknown>>;
  },
): Promise<{ rows: number; secs: number; cpu: number; after: Record<Step, Cost> }> {
  const w = await Warehouse.open(join(work, name));
  try {
    await sql.prepare?.(w);
    const { secs, cpu } = await cost(() => w.exec(sql.run));
    const rows = Number((await w.all(`SELECT count(*) AS n FROM ${sql.count}`))[0]!.n);
    const after = {} as Record<Step, Cost>;
    for (const [step, run] of Object.entries(sql.after ?? {}) as [Step, (w: Warehouse) => Promise<unknown>][])
      after[step] = await cost(() => run(w));
    return { rows, secs, cpu, after };
  } finally {
    await w.close();
  }
}

/**
 * (d) The ceiling: DuckDB's own `read_json` ingest of the same rows into the same table, as one statement. Then, timed
 * apart, the rest of what a run does with those rows once they are in the table: the checkpoint that folds them into
 * the database file (`checkpoint`), and the lake write, the lake writer's write of every row (`lake`).
 */
export function duckdbIngest(ndjson: string) {
  return timedIngest('ceiling', {
    prepare: (w) => w.ensureTables([SWAPS]),
    run: ceilingInsert([ndjson]),
    count: qt(SWAPS.table),
    after: {
      checkpoint: (w) => w.exec('CHECKPOINT'),
      lake: async (w) => {
        const root = join(work, 'ceiling-lake');
        await writePending(
          w,
          { ds: SWAPS, chainId: CHAIN, fromSeq: null, runs: [], rebuild: true, dropped: true },
          { root, lake: root },
        );
      },
    },
  });
}

export let aloneScript: Promise<string> | undefined;
/**
 * `bench/store-alone.ts` compiled as the command line is (`scripts/bundle-options.json`, DuckDB's package external),
 * so that its process holds what the exporter's would, not tsx and its compiler.
 */
export function storeAloneScript(): Promise<string> {
  const out = join(ROOT, 'dist/bench/store-alone.js');
  aloneScript ??= build({
    ...(bundleOptions as BuildOptions),
    entryPoints: [join(ROOT, 'bench/store-alone.ts')],
    external: ['@duckdb/node-api'],
    outfile: out,
  }).then(() => out);
  return aloneScript;
}

/** The rows of an NDJSON file in files of 1,000 (a page each) under `dir`. */
export function splitPages(ndjson: string, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const lines = readFileSync(ndjson, 'utf8').split('\n').filter(Boolean);
  const files: string[] = [];
  for (let i = 0; i < lines.length; i += 1000) {
    const f = join(dir, `page-${files.length}.ndjson`);
    writeFileSync(f, `${lines.slice(i, i + 1000).join('\n')}\n`);
    files.push(f);
  }
  return files;
}

/**
 * DuckDB alone storing the rows of `files` (`splitPages`), in a process that does nothing else
 * (`bench/store-alone.ts`): `per` files to a transaction, then a checkpoint. Returns its peak RSS and the RSS it
 * started from with the warehouse open.
 */
export async function storeAlone(
  files: readonly string[],
  per: number,
  limit = 'default',
): Promise<{ rows: number; startMb: number; peakMb: number } | { error: string }> {
  const dir = join(work, `alone-${per}-${limit}`);
  const child = spawn(process.execPath, [await storeAloneScript(), dir, limit, String(per), ...files], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) return { error: /Out of Memory Error[^\n(]*/.exec(err)?.[0] ?? `exit ${code}: ${err.slice(-300)}` };
  return JSON.parse(out) as { rows: number; startMb: number; peakMb: number };
}

/**
 * (e) DuckDB's native `read_json` of the same file, with the types it infers itself and no casts: the yardstick that
 * keeps the ceiling honest (a table whose types made the ceiling slow would hide the exporter's cost).
 */
export function nativeIngest(ndjson: string): Promise<{ rows: number; secs: number }> {
  return timedIngest('native', {
    run: `CREATE TABLE native AS SELECT * FROM read_json(${lit(ndjson)}, format = 'newline_delimited')`,
    count: 'native',
  });
}

/** A recording proxy in front of the sandbox: answers pass through, and the good ones are kept for a replay. */
export class Recorder {
  readonly pages = new Map<string, string>();
  private server: Server | undefined;

  constructor(private readonly upstream: string) {}

  async listen(): Promise<string> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const key = `${req.url}\n${body}`;
      const r = await fetch(`${this.upstream}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': String(req.headers['user-agent']) },
        body,
      });
      const text = await r.text();
      if (r.status === 200) this.pages.set(key, text);
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' }).end(text);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server!.close(() => r()));
  }
}

/**
 * (c2) The exporter's checks of every value (`checkPage`, what the page worker runs on each page), alone, on the
 * recorded pages of rows, parsed beforehand: the part of the task phase's work that the floor leaves out.
 */
export async function checksAlone(pages: ReadonlyMap<string, string>): Promise<Cost & { rows: number }> {
  const parsed = [...pages.values()]
    .map((text) => (JSON.parse(text) as { data?: { rows?: unknown } }).data?.rows)
    .filter((rows): rows is unknown[] => Array.isArray(rows));
  let rows = 0;
  const c = await cost(async () => {
    for (const items of parsed) {
      checkPage(SWAPS, CHAIN, items);
      rows += items.length;
    }
  });
  return { ...c, rows };
}

/** The replay server's counters, with the processor time it has used so far. */
export async function replayStats(url: string): Promise<{ served: number; missed: number; cpuMs: number }> {
  return (await fetch(`${url}/_replay/stats`)).json() as Promise<{ served: number; missed: number; cpuMs: number }>;
}

/** `bench/replay-server.ts` in its own process, serving `pages`. */
export async function startReplay(pages: Map<string, string>): Promise<{ url: string; stop: () => void }> {
  const file = join(work, 'pages.json');
  writeFileSync(file, JSON.stringify(Object.fromEntries(pages)));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/replay-server.ts'), file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`the replay server exited (${code}) before listening`)));
  });
  return { url, stop: () => child.kill() };
}
