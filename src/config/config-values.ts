/** Checks of the configuration's values that are more than a whole number or a text. */

import { UsageError } from '../errors.ts';

/**
 * Every pool type the official client asks the liquidity list for (DODOEX/widgets a56d6a1a: `AddLiquidity.tsx` sends
 * CLASSICAL, DVM, DSP, GSP and, where enabled, AMMV2 and AMMV3; `MyLiquidity.tsx` adds DPP).
 */
export const LIST_POOL_TYPES: readonly string[] = ['CLASSICAL', 'DVM', 'DSP', 'GSP', 'DPP', 'AMMV2', 'AMMV3'];

/** `trustedTokens`: token addresses by chain id, lower-cased. */
export function checkTrustedTokens(raw: unknown): Record<string, readonly string[]> {
  const example = '{"56": ["0x55d398326f99059ff775485246999027b3197955"]}';
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UsageError(`config "trustedTokens" must map chain ids to token addresses, like ${example}`);
  const out: Record<string, readonly string[]> = {};
  for (const [chain, list] of Object.entries(raw)) {
    if (!/^\d+$/.test(chain)) throw new UsageError(`config trustedTokens key "${chain}" must be a chain id such as 56`);
    if (!Array.isArray(list) || !list.every((a) => typeof a === 'string' && /^0x[0-9a-fA-F]{40}$/.test(a))) {
      throw new UsageError(
        `config trustedTokens["${chain}"] must be a list of token addresses (0x and 40 hex digits), like ${example}`,
      );
    }
    out[chain] = Object.freeze(list.map((a: string) => a.toLowerCase()));
  }
  return out;
}

/** `listPoolTypes`: a non-empty list of pool types. */
export function checkPoolTypes(raw: unknown): readonly string[] {
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((t) => typeof t === 'string' && /^[A-Z0-9]+$/.test(t))) {
    throw new UsageError(
      `config "listPoolTypes" must be a non-empty list of pool types such as ${JSON.stringify(LIST_POOL_TYPES)}`,
    );
  }
  return Object.freeze([...raw] as string[]);
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** A size in bytes: a whole number, or a text such as `64MiB` or `100MB`. */
export function checkSize(key: string, raw: unknown, min: number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(String(raw));
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  const v = m && unit ? Math.round(Number(m[1]) * unit) : NaN;
  if ((typeof raw !== 'number' && typeof raw !== 'string') || !Number.isFinite(v) || v < min) {
    throw new UsageError(
      `${key} must be a size of at least ${min / 1024 ** 2} MiB, such as 64MiB or ${64 * 1024 ** 2}, not ${JSON.stringify(raw)}`,
    );
  }
  return v;
}

/** An amount in USD, 0 or more. */
export function checkAmount(key: string, raw: unknown): number {
  const v = Number(raw);
  if (typeof raw !== 'number' || !Number.isFinite(v) || v < 0)
    throw new UsageError(`${key} must be a number of USD from 0, such as 50000, not ${JSON.stringify(raw)}`);
  return v;
}
