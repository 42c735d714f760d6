/**
 * Renews `test/mutation-survivors.md` from a StrykerJS JSON report (`reports/mutation/mutation.json` unless named).
 *
 *   npx tsx scripts/mutation-survivors.ts [report.json]
 *     A run over whole files: the section of every file in the report is rebuilt from its surviving and untested
 *     mutants, and the table row of every folder whose files are all in the report is recounted; the other sections
 *     and rows are kept as they were.
 *   npx tsx scripts/mutation-survivors.ts report.json --part "<title>"
 *     A run over line ranges (`--mutate file:from-to,…`, such as the lines changed since the table was measured) or
 *     over some files: its own table and sections go in a part of that title at the end of the file (replaced if it
 *     is there), and the rest of the file is kept.
 *
 * A survivor keeps the reason the file gave a mutant with the same mutation in that source file (the nearest line
 * first); a new one is marked "not yet killed", to be reviewed by hand.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const FILE = join(ROOT, 'test/mutation-survivors.md');
const NOT_YET = 'not yet killed: a test to write';
const TABLE_HEAD = ['| folder | score | killed | timed out | survived | no test |', '|---|---|---|---|---|---|'];

interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number } };
}
interface Row {
  line: number;
  status: 'survived' | 'no test';
  mutation: string;
  reason: string;
}
type Counts = { killed: number; timeout: number; survived: number; noCoverage: number };

/** The mutation as the file shows it: one line, at most 60 characters of replacement, pipes escaped. */
const shown = (m: Mutant) =>
  `${m.mutatorName}: \`${(m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 60)}\``.replaceAll('|', '\\|');

/** Folder of a source file, as the table names it (`src/errors.ts` stands alone). */
const folderOf = (path: string) => (path.split('/').length > 2 ? path.split('/').slice(0, 2).join('/') : path);

const score = (c: Counts) =>
  `${((100 * (c.killed + c.timeout)) / (c.killed + c.timeout + c.survived + c.noCoverage)).toFixed(1)}%`;
const rowOf = (folder: string, c: Counts) =>
  `| \`${folder}\` | ${score(c)} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} |`;
const totalRow = (c: Counts, label: string) =>
  `| **${label}** | **${score(c)}** | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} |`;
const ALL = 'all of `src/` but the sandbox and the CLI';
const ALL_OF_PART = 'all the mutants of this part';

/** The sections (`## ` or `### ` headings naming a source file) of a text, with their rows. */
function readSections(text: string): Map<string, Row[]> {
  const sections = new Map<string, Row[]>();
  for (const part of text.split(/\n(?=#{2,3} `)/)) {
    const name = /^#{2,3} `([^`]+)`/.exec(part.trim())?.[1];
    if (!name) continue;
    const rows: Row[] = [];
    for (const l of part.split('\n')) {
      const m = /^\| (\d+) \| (survived|no test) \| (.*) \| (.*) \|$/.exec(l);
      if (m) rows.push({ line: Number(m[1]), status: m[2] as Row['status'], mutation: m[3]!, reason: m[4]! });
    }
    sections.set(name, rows);
  }
  return sections;
}

/** Every file of the report: its counts and its rows, each given the reason an earlier row of that file gave. */
function fromReport(files: Record<string, { mutants: Mutant[] }>, earlier: Map<string, Row[]>) {
  const counts = new Map<string, Counts>();
  const sections = new Map<string, Row[]>();
  for (const [path, { mutants }] of Object.entries(files)) {
    const name = relative(ROOT, join(ROOT, path));
    const c = counts.get(folderOf(name)) ?? { killed: 0, timeout: 0, survived: 0, noCoverage: 0 };
    const left = (earlier.get(name) ?? []).filter((r) => !r.reason.startsWith('not yet killed'));
    const rows: Row[] = [];
    for (const m of mutants) {
      if (m.status === 'Killed') c.killed++;
      else if (m.status === 'Timeout') c.timeout++;
      else if (m.status === 'Survived' || m.status === 'NoCoverage') {
        if (m.status === 'Survived') c.survived++;
        else c.noCoverage++;
        const mutation = shown(m);
        const line = m.location.start.line;
        const same = left
          .filter((r) => r.mutation === mutation)
          .sort((a, b) => Math.abs(a.line - line) - Math.abs(b.line - line))[0];
        if (same) left.splice(left.indexOf(same), 1);
        const status = m.status === 'Survived' ? 'survived' : 'no test';
        rows.push({ line, status, mutation, reason: same?.reason ?? NOT_YET });
      }
    }
    counts.set(folderOf(name), c);
    rows.sort((a, b) => a.line - b.line || a.status.localeCompare(b.status) || a.mutation.localeCompare(b.mutation));
    sections.set(name, rows);
  }
  return { counts, sections };
}

function sum(rows: Iterable<string>): Counts {
  const total: Counts = { killed: 0, timeout: 0, survived: 0, noCoverage: 0 };
  for (const l of rows) {
    const n = l.split('|').slice(3, 7).map(Number);
    total.killed += n[0]!;
    total.timeout += n[1]!;
    total.survived += n[2]!;
    total.noCoverage += n[3]!;
  }
  return total;
}

function renderTable(byFolder: Map<string, string>, label: string): string {
  const rows = [...byFolder.keys()].sort().map((k) => byFolder.get(k)!);
  return [...TABLE_HEAD, ...rows, totalRow(sum(byFolder.values()), label)].join('\n');
}

function renderSections(sections: Map<string, Row[]>, level: string): string {
  return [...sections.keys()]
    .filter((name) => sections.get(name)!.length > 0)
    .sort()
    .map((name) => {
      const rows = sections.get(name)!;
      return [
        `${level} \`${name}\` (${rows.length})`,
        '',
        '| line | status | mutation | reason |',
        '|---|---|---|---|',
        ...rows.map((r) => `| ${r.line} | ${r.status} | ${r.mutation} | ${r.reason} |`),
      ].join('\n');
    })
    .join('\n\n');
}

/** Source files of a folder of the table (or the one file it names). */
const sourcesIn = (folder: string): string[] =>
  folder.endsWith('.ts')
    ? [folder]
    : readdirSync(join(ROOT, folder), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.ts') && statSync(join(ROOT, folder, f)).isFile())
        .map((f) => `${folder}/${f}`);

const args = process.argv.slice(2);
const partAt = args.indexOf('--part');
const partTitle = partAt >= 0 ? args[partAt + 1] : undefined;
if (partAt >= 0 && !partTitle) throw new Error('--part needs a title, e.g. --part "Lines changed since 0ecdcd4"');
const reportPath = args.filter((_, i) => partAt < 0 || (i !== partAt && i !== partAt + 1))[0];
const report = JSON.parse(readFileSync(reportPath ?? join(ROOT, 'reports/mutation/mutation.json'), 'utf8')) as {
  files: Record<string, { mutants: Mutant[] }>;
};
const text = readFileSync(FILE, 'utf8');
// The main part ends where a part of its own (a `# ` heading after the first line) begins.
const partStart = text.indexOf('\n# ');
const main = partStart >= 0 ? text.slice(0, partStart + 1) : text;
const parts = partStart >= 0 ? text.slice(partStart + 1).split(/\n(?=# )/) : [];
const head = main.slice(0, main.indexOf(TABLE_HEAD[0]!));
const afterHead = main.slice(head.length);
const tableEnd = afterHead.indexOf('\n\n');
const mainRows = afterHead
  .slice(0, tableEnd)
  .split('\n')
  .slice(2)
  .filter((l) => !l.startsWith('| **'));
const mainSections = readSections(afterHead.slice(tableEnd));
const earlierPart = partTitle ? parts.find((p) => p.startsWith(`# ${partTitle}\n`)) : undefined;
// A part keeps its own reasons; a file it has no section for (a new part's every file) takes those of the main one.
const { counts, sections } = fromReport(
  report.files,
  new Map([...mainSections, ...(earlierPart ? readSections(earlierPart) : [])]),
);

let out: string;
if (partTitle) {
  const byFolder = new Map([...counts].map(([folder, c]) => [folder, rowOf(folder, c)]));
  const earlier = earlierPart ?? '';
  // What the part says of its run, written by hand between its title and its table, is kept.
  const prose = earlier.slice(earlier.indexOf('\n') + 1, Math.max(0, earlier.indexOf(TABLE_HEAD[0]!))).trim();
  const part = [
    `# ${partTitle}`,
    ...(prose ? ['', prose] : []),
    '',
    renderTable(byFolder, ALL_OF_PART),
    '',
    renderSections(sections, '###'),
  ].join('\n');
  const others = parts.filter((p) => !p.startsWith(`# ${partTitle}\n`)).map((p) => p.trimEnd());
  out = `${main.trimEnd()}\n\n${[...others, part].join('\n\n')}\n`;
  console.log(`${partTitle}: ${score(sum(byFolder.values()))}`);
} else {
  const byFolder = new Map<string, string>();
  for (const l of mainRows) byFolder.set(/^\| `([^`]+)`/.exec(l)![1]!, l);
  const inReport = new Set(sections.keys());
  for (const [folder, c] of counts) {
    const missing = sourcesIn(folder).filter((f) => !inReport.has(f));
    if (missing.length === 0) byFolder.set(folder, rowOf(folder, c));
    else console.error(`${folder}: not every file was mutated (${missing.join(', ')}); its row is kept`);
  }
  for (const [name, rows] of sections) mainSections.set(name, rows);
  const rest = parts.map((p) => p.trimEnd()).join('\n\n');
  out = `${head}${renderTable(byFolder, ALL)}\n\n${renderSections(mainSections, '##')}\n${rest ? `\n${rest}\n` : ''}`;
  console.log(`all of src/ but the sandbox and the CLI: ${score(sum(byFolder.values()))}`);
}
writeFileSync(FILE, out);
