/** Durations as the command line and the config file take them. */
import { UsageError } from '../errors.ts';

/** Parses `90s`, `15m`, `2h`, `1d` into seconds; `flag` names the option in the error. */
export function parseDuration(text: string, flag = '--stale-after'): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0)
    throw new UsageError(`${flag} takes a duration such as 90s, 15m, 2h or 1d, not "${text}"`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'];
}
