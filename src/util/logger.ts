/** Structured logs on stderr (pino, one JSON object per line), with the API key removed from every string. */
import pino from 'pino';
import pretty from 'pino-pretty';
import { inert, jsonSafe } from './inert.ts';
import { redact } from './redact.ts';

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

/** What the event log needs: its level, the keys to remove, its format, and where it writes (stderr by default). */
export interface EventLogOptions {
  readonly level: string;
  /** Keys removed from every string field. */
  readonly secrets: readonly string[];
  readonly format?: (typeof LOG_FORMATS)[number];
  /** A stream taking each line; file descriptor 2 when absent. */
  readonly destination?: NodeJS.WritableStream;
}

/**
 * Creates the event log; every string field is scrubbed of `secrets`. `pretty` writes one line per event for people
 * (time, level, event, then the fields), upstream text in it made inert; `json` is one JSON object per line, with
 * every control and bidirectional character escaped (`jsonSafe`).
 */
export function createEventLog(o: EventLogOptions): EventLog {
  const { level, secrets, format = 'json' } = o;
  const stream =
    format === 'pretty'
      ? pretty({
          destination: o.destination ?? 2,
          sync: true,
          colorize: o.destination ? false : process.stderr.isTTY,
          singleLine: true,
          messageFormat: '{event}',
          translateTime: 'SYS:HH:MM:ss',
          ignore: 'event',
        })
      : (o.destination ?? pino.destination({ fd: 2, sync: true }));
  // JSON lines: pino escapes C0 controls; the characters JSON leaves raw (DEL, C1, bidi) are escaped too, so that a
  // log tailed on a terminal is inert and a log reader still decodes every byte.
  const logger = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      ...(format === 'json' ? { hooks: { streamWrite: jsonSafe } } : {}),
    },
    stream,
  );
  const clean = (v: string) => redact(v, secrets);
  const scrub = (v: unknown): unknown => (typeof v !== 'string' ? v : format === 'pretty' ? inert(clean(v)) : clean(v));
  return (event, fields, lvl = 'info') => {
    const clean: Record<string, unknown> = { event };
    for (const [k, v] of Object.entries(fields)) clean[k] = scrub(v);
    logger[lvl](clean);
  };
}
