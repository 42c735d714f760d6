/**
 * Logs on stderr: one JSON object per line (pino) for log shippers, or one readable line per event for people, with the
 * API key removed from every string.
 */
import { writeSync } from 'node:fs';
import pino from 'pino';
import { inert, jsonSafe } from './inert.ts';
import { redact } from './redact.ts';
import { wrap } from './wrap.ts';

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A logger of task events. */
export type EventLog = (
  event: string,
  fields: Record<string, unknown>,
  level?: 'info' | 'warn' | 'error' | 'debug',
) => void;

/** Formats accepted by `--log-format`: JSON lines for log shippers, or pretty lines for people. */
export const LOG_FORMATS = ['json', 'pretty'] as const;

/** Where log lines go: a stream, or a function taking each line (with its newline). */
export type LogDestination = NodeJS.WritableStream | { readonly write: (line: string) => unknown };

/** What the event log needs: its level, the keys to remove, its format, and where it writes (stderr by default). */
export interface EventLogOptions {
  readonly level: string;
  /** Keys removed from every string field. */
  readonly secrets: readonly string[];
  readonly format?: (typeof LOG_FORMATS)[number];
  /** Where each line goes; file descriptor 2 when absent. */
  readonly destination?: LogDestination;
  /** Pretty lines only: the width to wrap them to (a terminal's), or none. */
  readonly width?: number | undefined;
}

/** Pino's level numbers. */
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/** Fields that the pretty line shows in its head (`dataset@chain`) or its tail (the error), not as `key=value`. */
const PLACED = new Set(['dataset', 'chain', 'chainId', 'error']);

/** An identical error within this many milliseconds is named as "the same as for …" instead of in full. */
const SAME_WITHIN_MS = 10_000;

/**
 * What an error says without the route it names: the same failure of one host (a refused key, no answer) reads alike
 * for every chain and subgraph behind it, whose URLs differ in their query.
 */
export function cause(message: string): string {
  return message.replace(/(https?:\/\/[^/\s?#]+)[^\s)]*/g, '$1');
}

/** One field as `key=value`: strings bare when they hold no space, quote or `=`, other values as JSON. */
function pair(key: string, v: unknown): string {
  const text = typeof v === 'string' && v !== '' && !/[\s"=]/.test(v) ? v : JSON.stringify(v);
  return `${key}=${text}`;
}

/**
 * The pretty log: one line per event, `[HH:MM:SS] LEVEL: event dataset@chain key=value …: error`, handed to `write`
 * (which removes the key and makes the line inert). When many tasks fail alike (an unreachable host fails each of them), the
 * error is written once in full, and the lines after it within a few seconds name the task it was first written for.
 */
function prettyLog(write: (line: string) => void, opts: { readonly collapse: boolean }) {
  const seen = new Map<string, { subject: string; at: number }>();
  return (level: string, event: string, fields: Record<string, unknown>) => {
    const now = new Date();
    const time = [now.getHours(), now.getMinutes(), now.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
    const { dataset, chain, error } = fields;
    const subject = typeof dataset === 'string' ? (typeof chain === 'string' ? `${dataset}@${chain}` : dataset) : '';
    let line = `[${time}] ${level.toUpperCase()}: ${event}${subject ? ` ${subject}` : ''}`;
    for (const [k, v] of Object.entries(fields)) if (!PLACED.has(k) && v !== undefined) line += ` ${pair(k, v)}`;
    if (error !== undefined) {
      // A task's error names its task first ("dodoex.swaps on bsc: …"), which the head already says.
      const text = String(error);
      const prefix = typeof dataset === 'string' && typeof chain === 'string' ? `${dataset} on ${chain}: ` : '';
      const rest = prefix && text.startsWith(prefix) ? text.slice(prefix.length) : text;
      const key = `${level}\u0000${event}\u0000${cause(rest)}`;
      const before = seen.get(key);
      if (before?.subject && subject && before.subject !== subject && now.getTime() - before.at < SAME_WITHIN_MS) {
        // One cause, one line: where only warnings and errors are shown (a terminal's default), the tasks that failed
        // alike after the first are left to the run's summary, which counts them; at info level each has its line.
        if (opts.collapse) return;
        line += `: the same error as ${before.subject}`;
      } else {
        line += `: ${rest}`;
        seen.set(key, { subject, at: now.getTime() });
      }
    }
    // The key is removed from the whole line (nested values included) before it is made inert and wrapped.
    write(line);
  };
}

/**
 * Creates the event log; every string field is scrubbed of `secrets`. `pretty` writes one line per event for people
 * (see `prettyLog`), wrapped to `width` when given; `json` is one JSON object per line (pino), with every control and
 * bidirectional character escaped (`jsonSafe`).
 */
export function createEventLog(o: EventLogOptions): EventLog {
  const { level, secrets, format = 'json' } = o;
  const clean = (v: unknown): unknown => (typeof v === 'string' ? redact(v, secrets) : v);
  if (format === 'pretty') {
    const threshold = LEVELS[level] ?? Number.POSITIVE_INFINITY;
    const destination = o.destination;
    const write = destination
      ? (line: string) => void destination.write(line)
      : (line: string) => void writeSync(2, line);
    const print = prettyLog(
      (line) => {
        const safe = inert(redact(line, secrets));
        write(`${o.width ? wrap(safe, { width: o.width, indent: 4 }) : safe}\n`);
      },
      { collapse: threshold > LEVELS.info! },
    );
    return (event, fields, lvl = 'info') => {
      if (LEVELS[lvl]! >= threshold) print(lvl, event, fields);
    };
  }
  // JSON lines: pino escapes C0 controls; the characters JSON leaves raw (DEL, C1, bidi) are escaped too, so that a
  // log tailed on a terminal is inert and a log reader still decodes every byte.
  const logger = pino(
    { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, hooks: { streamWrite: jsonSafe } },
    (o.destination as NodeJS.WritableStream | undefined) ?? pino.destination({ fd: 2, sync: true }),
  );
  return (event, fields, lvl = 'info') => {
    const scrubbed: Record<string, unknown> = { event };
    for (const [k, v] of Object.entries(fields)) scrubbed[k] = clean(v);
    logger[lvl](scrubbed);
  };
}
