/** Structured logs on stderr (pino, one JSON object per line), with the API key removed from every string. */
import pino from 'pino';
import pretty from 'pino-pretty';

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A logger of task events. */
export type EventLog = (event: string, fields: Record<string, unknown>, level?: 'info' | 'warn' | 'error' | 'debug') => void;

/** Formats accepted by `--log-format`: JSON lines for log shippers, or pretty lines for people. */
export const LOG_FORMATS = ['json', 'pretty'] as const;

/** Creates the event log; every string field is scrubbed of `secret`. */
export function createEventLog(level: string, secret: string, format: (typeof LOG_FORMATS)[number] = 'json'): EventLog {
  const stream = format === 'pretty' ? pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY }) : pino.destination({ fd: 2, sync: true });
  const logger = pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, stream);
  const scrub = (v: unknown): unknown => (typeof v === 'string' && secret ? v.split(secret).join('***') : v);
  return (event, fields, lvl = 'info') => {
    const clean: Record<string, unknown> = { event };
    for (const [k, v] of Object.entries(fields)) clean[k] = scrub(v);
    logger[lvl](clean);
  };
}
