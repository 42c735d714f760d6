/**
 * The `routes` setting: the ways to reach a chain's subgraph, their type and their checks, each error naming the key
 * and the fix.
 */
import { UsageError } from '../errors.ts';
import { canonicalSchema, SUBGRAPH_SCHEMAS } from '../schemas/entity-model.ts';

/**
 * One way to reach a chain's subgraph: the service's own subgraph route (`self`, at `baseUrl` unless the route names
 * another deployment of the service), or the indexing gateway (`gateway`, a subgraph id). Each may carry its own key.
 */
export type Route =
  | { readonly kind: 'self'; readonly baseUrl?: string; readonly apiKey?: string }
  | { readonly kind: 'gateway'; readonly subgraphId: string; readonly gatewayUrl?: string; readonly apiKey?: string };

/**
 * How a task picks one of several routes: the first in the configured order that is healthy and no more than
 * `maxLagBlocks` behind the freshest (`first-healthy`), or the freshest of those (`freshest`, graph-client's
 * `highestValue`).
 */
export const ROUTE_CHOICES = ['first-healthy', 'freshest'] as const;

/** An http(s) URL setting, without its trailing slashes. */
export function checkUrl(key: string, v: string): string {
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    return v.replace(/\/+$/, '');
  } catch {
    throw new UsageError(`${key} must be an http(s) URL such as https://api.dodoex.io, not "${v}"`);
  }
}

const ROUTE_EXAMPLE = '{"56/dodoex": [{"kind": "self"}, {"kind": "gateway", "subgraphId": "…", "apiKey": "…"}]}';

/** A route's own key: printable, like the main one. */
function checkRouteKey(where: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^[\x21-\x7e]+$/.test(v))
    throw new UsageError(`config ${where}.apiKey must be a key without spaces or control characters`);
  return v;
}

/** One route of a list, checked field by field. */
function checkRoute(where: string, r: unknown): Route {
  const shape =
    'must be {"kind": "self"} (optionally with "baseUrl" and "apiKey") or {"kind": "gateway", "subgraphId": "<id>"} (optionally with "gatewayUrl" and "apiKey")';
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new UsageError(`config ${where} ${shape}`);
  const o = r as Record<string, unknown>;
  const allowed = o.kind === 'self' ? ['kind', 'baseUrl', 'apiKey'] : ['kind', 'subgraphId', 'gatewayUrl', 'apiKey'];
  const extra = Object.keys(o).find((k) => !allowed.includes(k));
  if ((o.kind !== 'self' && o.kind !== 'gateway') || extra !== undefined)
    throw new UsageError(`config ${where} ${shape}${extra ? `; "${extra}" is not a field of it` : ''}`);
  const apiKey = checkRouteKey(where, o.apiKey);
  const key = apiKey === undefined ? {} : { apiKey };
  if (o.kind === 'self') {
    if (o.baseUrl === undefined) return { kind: 'self', ...key };
    return { kind: 'self', baseUrl: checkUrl(`${where}.baseUrl`, String(o.baseUrl)), ...key };
  }
  if (typeof o.subgraphId !== 'string' || !o.subgraphId) throw new UsageError(`config ${where} ${shape}`);
  const gateway =
    o.gatewayUrl === undefined ? {} : { gatewayUrl: checkUrl(`${where}.gatewayUrl`, String(o.gatewayUrl)) };
  return { kind: 'gateway', subgraphId: o.subgraphId, ...gateway, ...key };
}

/** The routes per chain and schema: one route, or a list of them in order of preference. */
export function checkRoutes(raw: unknown): Record<string, Route[]> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UsageError(`config "routes" must be an object like ${ROUTE_EXAMPLE}`);
  const out: Record<string, Route[]> = {};
  for (const [key, r] of Object.entries(raw as Record<string, unknown>)) {
    const m = /^(\d+)\/([a-z0-9-]+)$/.exec(key);
    const schema = m ? canonicalSchema(m[2]!) : undefined;
    if (!m || !schema)
      throw new UsageError(
        `config route key "${key}" must be <chainId>/<schema> with schema ${SUBGRAPH_SCHEMAS.join(', ')}`,
      );
    const list = Array.isArray(r) ? r : [r];
    if (!list.length)
      throw new UsageError(`config route "${key}" is an empty list: name at least one route, as in ${ROUTE_EXAMPLE}`);
    out[`${m[1]}/${schema}`] = list.map((x, i) =>
      checkRoute(Array.isArray(r) ? `route "${key}"[${i}]` : `route "${key}"`, x),
    );
  }
  return out;
}
