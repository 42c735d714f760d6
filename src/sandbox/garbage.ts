/**
 * Upstream garbage on request (`POST /_sandbox/garbage`): answers a pipeline must refuse rather than store.
 * - `html`: an HTML error page with HTTP 200 instead of JSON (a proxy in the way);
 * - `wrong-type`: `entity.field` comes back with the wrong JSON type (a number for a string, text for a number);
 * - `missing-field`: `entity.field` is left out of every row;
 * - `remove-field`: the deployment's schema no longer has `entity.field` (validation errors, introspection without it);
 * - `indexing-errors`: `_meta.hasIndexingErrors` is true while data is served;
 * - `duplicate-id`: every page of `entity` repeats its first row right after it, with the same id and an `updatedAt`
 *   one second later (two entities with one id, which no subgraph can hold: a defect the exporter must survive by
 *   keeping one row per id, the newest);
 * - `null-answer`: the liquidity list answers `field` (`liquidity_list`, `lqList` or `totalCount`) as null, which
 *   its real types allow;
 * - `hostile`: what an attacker or a broken endpoint sends, by `case`:
 *   - `names`: token names and symbols with markup, terminal escapes, bidirectional controls, NUL and C1 bytes, and
 *     1 MiB of text (`HOSTILE_TEXT`), in every answer and in `/_sandbox/rows` alike, so an export can be compared;
 *   - `error-text`: every GraphQL answer is an error whose message holds escapes, bidi controls and markup;
 *   - `endless`: every GraphQL answer is `200 application/json` whose body never ends;
 *   - `trickle`: every GraphQL answer sends one byte a second, for ever;
 *   - `numbers`: the first Swap of each page has `amountIn` 1e400 (a BigDecimal graph-node can hold and prints in
 *     full: graph/src/data/store/scalar/bigdecimal.rs, `test_normalize`, graphprotocol/graph-node f27eb5f), and the
 *     first Token of each page a `totalSupply` of 10,000 digits.
 */
import type { GraphQLSchema } from 'graphql';
import { UsageError } from '../errors.ts';
import type { SchemaModel } from '../schemas/entity-model.ts';
import { buildApiSchema } from './api-schema.ts';
import type { Deployment, GraphQLResult } from './deployment.ts';

/** The kinds of garbage. */
export const GARBAGE_MODES = [
  'html',
  'wrong-type',
  'missing-field',
  'remove-field',
  'indexing-errors',
  'duplicate-id',
  'null-answer',
  'hostile',
] as const;

/** The cases of `hostile`. */
export const HOSTILE_CASES = ['names', 'error-text', 'endless', 'trickle', 'numbers'] as const;
export type HostileCase = (typeof HOSTILE_CASES)[number];

/** 1 MiB (and a few bytes) of text: wide characters, emoji and markup. */
const MEGABYTE_NAME = '名前🦄<i>'.repeat(Math.ceil(1024 ** 2 / 13));

/**
 * The hostile names: each of these texts, wherever it appears in a token's or pool's `symbol` or `name` (the sandbox's
 * DUST, BIG and 'unknown' tokens, their LP tokens and the pools that hold them), is replaced by its hostile version.
 */
export const HOSTILE_TEXT: Readonly<Record<string, string>> = {
  'Dust token': '<script>alert("name")</script><img src=x onerror=alert(1)>',
  'Big supply': '\u2066isolate\u2069 \u202aembedded\u202c \u200fmark\u200e end',
  Nameless: MEGABYTE_NAME,
  DUST: '\u001b]0;pwned\u0007\u001b[2J\u202eUSDT',
  BIG: 'NUL\u0000C1\u0085\u009b31mDEL\u007f',
};
const HOSTILE_KEYS = Object.keys(HOSTILE_TEXT).sort((a, b) => b.length - a.length);
/** Fields that carry names: `symbol`, `name`, `baseSymbol`, `quoteSymbol`… */
const NAME_FIELD = /symbol|name/i;

/** A text with the hostile names put in. */
function hostileText(v: string): string {
  for (const k of HOSTILE_KEYS) if (v.includes(k)) v = v.split(k).join(HOSTILE_TEXT[k]!);
  return v;
}

/** Puts the hostile names into every name field of a value, at any depth. */
export function hostileNames(v: unknown): void {
  if (Array.isArray(v)) for (const x of v) hostileNames(x);
  else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(o)) {
      if (typeof x === 'string' && NAME_FIELD.test(k)) o[k] = hostileText(x);
      else if (x && typeof x === 'object') hostileNames(x);
    }
  }
}

/** The message of every answer under `hostile` `error-text`. */
export const HOSTILE_ERROR =
  'indexer said \u001b[2J\u001b]0;owned\u0007 \u202edeifitrec\u202c <b onmouseover=alert(1)>bold</b> \u009b6n';

/** A BigDecimal of 1e400, as graph-node prints it. */
export const HUGE_DECIMAL = `1${'0'.repeat(400)}`;
/** A BigInt of 10,000 digits. */
export const HUGE_BIGINT = '9'.repeat(10_000);

/** The liquidity-list fields `null-answer` can null. */
const NULLABLE_LIST_FIELDS = ['liquidity_list', 'lqList', 'totalCount'];

/** One garbage setting. */
export interface Garbage {
  readonly mode: (typeof GARBAGE_MODES)[number];
  /** Entity and field, for the modes that change one field. */
  readonly entity?: string;
  readonly field?: string;
  /** The case of `hostile`. */
  readonly case?: HostileCase;
}

/** The page a misconfigured proxy serves. */
export const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n';

/** Reads a control-API body; `{}` or `{"mode": ""}` turns garbage off. */
export function parseGarbage(body: Record<string, unknown>, models: readonly SchemaModel[]): Garbage | undefined {
  if (!body.mode) return undefined;
  const mode = GARBAGE_MODES.find((m) => m === body.mode);
  if (!mode)
    throw new UsageError(`unknown garbage mode "${String(body.mode)}"; valid modes: ${GARBAGE_MODES.join(', ')}`);
  if (mode === 'html' || mode === 'indexing-errors') return { mode };
  if (mode === 'hostile') {
    const c = HOSTILE_CASES.find((x) => x === body.case);
    if (!c) throw new UsageError(`garbage mode hostile needs "case", one of ${HOSTILE_CASES.join(', ')}`);
    return { mode, case: c };
  }
  if (mode === 'null-answer') {
    if (!NULLABLE_LIST_FIELDS.includes(String(body.field)))
      throw new UsageError(`garbage mode null-answer needs "field", one of ${NULLABLE_LIST_FIELDS.join(', ')}`);
    return { mode, field: String(body.field) };
  }
  const entity = String(body.entity ?? '');
  if (mode === 'duplicate-id') {
    if (!models.some((m) => m.byName.has(entity)))
      throw new UsageError('garbage mode duplicate-id needs an existing "entity", e.g. {"entity": "Swap"}');
    return { mode, entity };
  }
  const field = String(body.field ?? '');
  if (!models.some((m) => m.byName.get(entity)?.field.has(field)))
    throw new UsageError(
      `garbage mode ${mode} needs an existing "entity" and "field", e.g. {"entity": "Swap", "field": "amountIn"}`,
    );
  return { mode, entity, field };
}

const narrowed = new WeakMap<Deployment, { key: string; api: GraphQLSchema }>();

/** The deployment as the garbage setting shows it: without the removed field in its schema. */
export function garbledDeployment(dep: Deployment, g: Garbage | undefined): Deployment {
  if (g?.mode !== 'remove-field' || !dep.model.byName.get(g.entity!)?.field.has(g.field!)) return dep;
  const key = `${g.entity}.${g.field}`;
  let hit = narrowed.get(dep);
  if (hit?.key !== key) {
    const entities = dep.model.entities.map((e) => {
      if (e.name !== g.entity) return e;
      const fields = e.fields.filter((f) => f.name !== g.field);
      return { ...e, fields, field: new Map(fields.map((f) => [f.name, f])) };
    });
    const model: SchemaModel = { ...dep.model, entities, byName: new Map(entities.map((e) => [e.name, e])) };
    hit = { key, api: buildApiSchema(model, dep.apiOptions) };
    narrowed.set(dep, hit);
  }
  return { ...dep, api: hit.api };
}

/** A wrong JSON type for a value. */
function wrongType(v: unknown): unknown {
  if (typeof v === 'string') return 12.5;
  if (typeof v === 'number' || typeof v === 'boolean') return 'not-a-number';
  return 'not-an-object';
}

/** The row hook that applies `wrong-type`, `missing-field` and hostile `names`, or undefined. */
export function rowGarbler(
  g: Garbage | undefined,
): ((entity: string, row: Record<string, unknown>) => void) | undefined {
  if (g?.mode === 'hostile' && g.case === 'names') return (_entity, row) => hostileNames(row);
  if (g?.mode !== 'wrong-type' && g?.mode !== 'missing-field') return undefined;
  return (entity, row) => {
    if (entity !== g.entity || !(g.field! in row)) return;
    if (g.mode === 'missing-field') delete row[g.field!];
    else row[g.field!] = wrongType(row[g.field!]);
  };
}

/** The page hook that applies `duplicate-id` and hostile `numbers` to each collection answered, or undefined. */
export function pageGarbler(
  g: Garbage | undefined,
): ((entity: string, rows: Record<string, unknown>[]) => void) | undefined {
  if (g?.mode === 'hostile' && g.case === 'numbers') {
    return (entity, rows) => {
      if (entity === 'Swap' && rows[0] && 'amountIn' in rows[0]) rows[0].amountIn = HUGE_DECIMAL;
      if (entity === 'Token' && rows[0] && 'totalSupply' in rows[0]) rows[0].totalSupply = HUGE_BIGINT;
    };
  }
  if (g?.mode !== 'duplicate-id') return undefined;
  return (entity, rows) => {
    if (entity !== g.entity || rows.length === 0) return;
    const copy = { ...rows[0]! };
    if (typeof copy.updatedAt === 'string') copy.updatedAt = String(BigInt(copy.updatedAt) + 1n);
    rows.splice(1, 0, copy);
  };
}

/** A liquidity-list result with `null-answer` and hostile `names` applied. */
export function garbleList(result: GraphQLResult, g: Garbage | undefined): GraphQLResult {
  if (g?.mode === 'hostile' && g.case === 'names') hostileNames(result.data);
  const info = result.data?.liquidity_list as Record<string, unknown> | null | undefined;
  if (g?.mode !== 'null-answer' || !info) return result;
  if (g.field === 'liquidity_list') return { ...result, data: { ...result.data, liquidity_list: null } };
  return { ...result, data: { ...result.data, liquidity_list: { ...info, [g.field!]: null } } };
}

/** The result with `indexing-errors` applied to its `_meta`. */
export function garbleMeta(result: GraphQLResult, g: Garbage | undefined): GraphQLResult {
  if (g?.mode !== 'indexing-errors' || !result.data) return result;
  for (const v of Object.values(result.data))
    if (v && typeof v === 'object' && 'hasIndexingErrors' in v) (v as Record<string, unknown>).hasIndexingErrors = true;
  return result;
}
