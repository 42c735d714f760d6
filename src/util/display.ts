/**
 * Everything shown to people goes through here or `inert.ts`: upstream text made inert (control and bidirectional
 * characters as visible escapes, so that a token symbol can neither drive the terminal nor reorder a line), cut to a
 * width counted in terminal cells (wide characters and emoji count two), and numbers written for reading. Stored data,
 * CSV, JSON, Parquet and Arrow output keep every byte; only what a person reads is changed.
 */
import stringWidth from 'string-width';
import { inert } from './inert.ts';

/**
 * Printable ASCII alone: a cell a character, nothing to escape, no grapheme of more than one character. Most cells of a
 * report (numbers, addresses, symbols, days) are such text, and take the fast path of `cells` and `fit`.
 */
const PLAIN = /^[\x20-\x7e]*$/;

/** Plain text, or plain text that `fit` cut (an ellipsis at its end, one cell wide). */
const PLAIN_OR_CUT = /^[\x20-\x7e]*…?$/;

/** Terminal cells the text takes (after `inert`). */
export function cells(text: string): number {
  return PLAIN_OR_CUT.test(text) ? text.length : stringWidth(text);
}

const segmenter = new Intl.Segmenter();

/**
 * Inert text cut to at most `width` cells, with an ellipsis where it was cut (never in the middle of a grapheme). Only
 * the graphemes that can show are measured, so a megabyte of text costs no more than a word.
 */
export function fit(text: string, width: number): string {
  // Plain text is cut where it passes the width: only its first `width + 1` characters decide.
  const head = text.slice(0, width + 1);
  if (PLAIN.test(head)) return text.length <= width ? text : `${head.slice(0, Math.max(0, width - 1))}…`;
  return fitGraphemes(text, width);
}

/** `fit` of any text, a grapheme at a time (`fit` takes a shorter way for plain text). */
export function fitGraphemes(text: string, width: number): string {
  const kept: string[] = [];
  const widths: number[] = [];
  let used = 0;
  let cut = false;
  for (const { segment } of segmenter.segment(inert(text))) {
    const w = cells(segment);
    if (used + w > width) {
      cut = true;
      break;
    }
    kept.push(segment);
    widths.push(w);
    used += w;
  }
  if (!cut) return kept.join('');
  // Room for the ellipsis.
  while (kept.length && used > width - 1) {
    kept.pop();
    used -= widths.pop()!;
  }
  return `${kept.join('')}…`;
}

/** Inert text padded with spaces to `width` cells (on the right, or the left for numbers). */
export function pad(text: string, width: number, right = false): string {
  const gap = ' '.repeat(Math.max(0, width - cells(text)));
  return right ? gap + text : text + gap;
}

/**
 * The lines of a table, as every table of the command line draws it: the header, then a line per row; each column as
 * wide as its widest cell (terminal cells), two spaces apart, right-aligned where `opts.right` says; with `rule`, a line of
 * dashes under the header. Cells are shown as given: escaping and cutting them is the caller's.
 */
export function tableLines(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  opts: { readonly right: readonly boolean[]; readonly rule?: boolean },
): string[] {
  const widths = columnWidths(head, rows);
  const out = [tableLine(head, widths, opts.right)];
  if (opts.rule) out.push(ruleLine(widths));
  for (const r of rows) out.push(tableLine(r, widths, opts.right));
  return out;
}

/** The width of each column of a table: its widest cell, the header's included, in terminal cells. */
export function columnWidths(head: readonly string[], rows: Iterable<readonly string[]>): number[] {
  const widths = head.map(cells);
  for (const r of rows)
    for (let i = 0; i < widths.length; i++) {
      const w = cells(r[i]!);
      if (w > widths[i]!) widths[i] = w;
    }
  return widths;
}

/** One line of a table whose columns are `widths` wide: cells two spaces apart, padded, no space at the end. */
export function tableLine(r: readonly string[], widths: readonly number[], right: readonly boolean[]): string {
  let line = '';
  for (let i = 0; i < widths.length; i++) line += (i ? '  ' : '') + pad(r[i]!, widths[i]!, right[i]);
  return line.trimEnd();
}

/** The line of dashes under a table's header. */
export function ruleLine(widths: readonly number[]): string {
  return widths
    .map((w) => '-'.repeat(w))
    .join('  ')
    .trimEnd();
}

const grouped = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumSignificantDigits: 4 });
const small = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 4 });

/**
 * A number for reading: integers as they are; other numbers with about 4 to 6 significant digits, thousands
 * separators, and K, M, B, T from a million up; scientific notation beyond 1e15 or below 1e-6.
 */
export function humanNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) && Math.abs(n) < 1e15) return String(n);
  const a = Math.abs(n);
  if (a >= 1e15 || (a > 0 && a < 1e-6)) return n.toExponential(3).replace(/\.?0+e/, 'e');
  if (a >= 1e6) return compact.format(n);
  if (a >= 1) return grouped.format(n);
  return small.format(n);
}

/** DuckDB's text of a time in UTC: `2026-01-01 00:00:00`, then a fraction of a second and `+00`. */
const UTC_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)?\+00$/;

/** A time for reading, in one format everywhere: `2026-01-01 00:00:00Z` (UTC, to the second). */
export function humanTime(t: Date | string | number): string {
  // DuckDB's text of a UTC time already reads so, but for its fraction and offset: no date to parse.
  const utc = typeof t === 'string' ? UTC_TEXT.exec(t) : null;
  if (utc) return `${utc[1]} ${utc[2]}Z`;
  // V8 reads DuckDB's `2026-01-01 00:00:00.123456+00` (and any other offset) as the instant it names.
  const d = t instanceof Date ? t : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : `${d.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** A duration in seconds for reading: `45s`, `12m`, `3.5h`, `2.1d`. */
export function humanDuration(secs: number): string {
  if (secs < 60) return `${Math.round(secs)}s`;
  if (secs < 3600) return `${Math.round(secs / 60)}m`;
  if (secs < 86_400 * 2) return `${(secs / 3600).toFixed(1)}h`;
  return `${(secs / 86_400).toFixed(1)}d`;
}

/** The width to fit: the terminal's, or `COLUMNS` when set (as shells and `watch` set it), or none. */
export function terminalWidth(): { width?: number } {
  if (process.stdout.isTTY) return { width: process.stdout.columns };
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? { width: columns } : {};
}
