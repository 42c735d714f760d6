/** Compares the entity schemas the catalog was built from with an upstream's introspected API schema. */
import { fieldTypeText, type SchemaModel } from '../schemas/entity-model.ts';

/** The introspection query: every type with its fields and their type references. */
export const INTROSPECTION_QUERY = `{ __schema { types { name kind fields { name type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`;

/** A type reference as introspection returns it. */
export interface TypeRef {
  readonly kind: string;
  readonly name: string | null;
  readonly ofType?: TypeRef | null;
}

/** The part of an introspection answer that is compared. */
export interface Introspected {
  readonly __schema: {
    readonly types: readonly { name: string; kind: string; fields: { name: string; type: TypeRef }[] | null }[];
  };
}

/** One difference between the catalog and the upstream. */
export interface Drift {
  /**
   * `breaking`: a field the catalog reads is gone or changed; `unavailable`: the deployment has no such entity at all
   * (older deployments lack some), so its dataset is skipped there; `notice`: something new or unread changed.
   */
  readonly severity: 'breaking' | 'unavailable' | 'notice';
  readonly what: string;
}

/** `[Token!]!` style text of an introspected type. */
export function typeText(t: TypeRef): string {
  if (t.kind === 'NON_NULL') return `${typeText(t.ofType!)}!`;
  if (t.kind === 'LIST') return `[${typeText(t.ofType!)}]`;
  return t.name ?? '?';
}

/**
 * The drift of one upstream schema. `read` maps each entity the catalog exports to the fields it reads; changes to
 * those are breaking, everything else is a notice.
 */
export function schemaDrift(
  model: SchemaModel,
  upstream: Introspected,
  read: ReadonlyMap<string, ReadonlySet<string>>,
): Drift[] {
  const out: Drift[] = [];
  const types = new Map(upstream.__schema.types.filter((t) => t.kind === 'OBJECT').map((t) => [t.name, t]));
  for (const e of model.entities) {
    const readFields = read.get(e.name);
    const t = types.get(e.name);
    if (!t) {
      out.push({
        severity: 'unavailable',
        what: `type ${e.name} is not in this deployment: its dataset is skipped here`,
      });
      continue;
    }
    const got = new Map((t.fields ?? []).map((f) => [f.name, typeText(f.type)]));
    for (const f of e.fields) {
      const want = fieldTypeText(f);
      const have = got.get(f.name);
      const severity = readFields?.has(f.name) ? 'breaking' : 'notice';
      if (have === undefined) out.push({ severity, what: `field ${e.name}.${f.name} (${want}) is gone` });
      else if (have !== want) out.push({ severity, what: `field ${e.name}.${f.name} changed type: ${want} → ${have}` });
    }
    for (const [name, type] of got)
      if (!e.field.has(name))
        out.push({
          severity: 'notice',
          what: `field ${e.name}.${name} (${type}) is new; the catalog does not read it`,
        });
  }
  const known = new Set(model.entities.map((e) => e.name));
  for (const name of types.keys()) {
    if (name === 'Query' || name === 'Subscription' || name.startsWith('_') || name.startsWith('__') || known.has(name))
      continue;
    out.push({ severity: 'notice', what: `type ${name} is new; the catalog does not export it` });
  }
  return out;
}
