/** Executes subgraph queries with graph-node's semantics: validated by graphql-js, resolved by a direct walk of the selections. */
import {
  type DocumentNode,
  executeSync,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLObjectType,
  type GraphQLSchema,
  getArgumentValues,
  getVariableValues,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
  validate,
} from 'graphql';
import type { EntityModel } from '../schemas/entity-model.ts';
import { aggregationKey } from './aggregation-data.ts';
import { type CollectionArgs, type Limits, runCollection } from './collection.ts';
import {
  type Block,
  type Deployment,
  type ExecOptions,
  type GraphQLRequest,
  type GraphQLResult,
  resolveBlock,
} from './deployment.ts';
import type { FilterContext } from './filter.ts';
import { QueryError } from './graph-errors.ts';
import { interfaceEntity, rowEntity } from './interface-table.ts';
import { allRows, type Row, type Table, type View } from './table.ts';

/** Parsed and validated documents kept by query text; exporters send the same text with new variables. */
const DOC_CACHE_SIZE = 512;

/** One selected field of an entity: a scalar, `__typename`, a reference, a list of references, or a derived list. */
interface FieldPlan {
  readonly kind: 'scalar' | 'typename' | 'ref' | 'list' | 'derived';
  /** The entity the field belongs to. */
  readonly entity: EntityModel;
  readonly key: string;
  readonly name: string;
  readonly node: FieldNode;
  readonly target?: EntityModel;
  readonly table?: Table;
  readonly derivedFrom?: string;
}

/** Parsed and validated documents, per API schema (a deployment's schema can be narrowed by garbage injection). */
const docCaches = new WeakMap<GraphQLSchema, Map<string, { doc?: DocumentNode; errors?: GraphQLResult['errors'] }>>();

function translate(e: GraphQLError): { message: string; locations?: readonly { line: number; column: number }[] } {
  const m = /^Cannot query field "(.+)" on type "(.+)"\./.exec(e.message);
  const message = m ? `Type \`${m[2]}\` has no field \`${m[1]}\`` : e.message;
  return e.locations ? { message, locations: e.locations } : { message };
}

function load(api: GraphQLSchema, text: string): { doc?: DocumentNode; errors?: GraphQLResult['errors'] } {
  const key = text;
  let docs = docCaches.get(api);
  if (!docs) docCaches.set(api, (docs = new Map()));
  const hit = docs.get(key);
  if (hit) return hit;
  let entry: { doc?: DocumentNode; errors?: GraphQLResult['errors'] };
  try {
    const doc = parse(text);
    const errs = validate(api, doc);
    entry = errs.length ? { errors: errs.map(translate) } : { doc };
  } catch (e) {
    entry = { errors: [translate(e as GraphQLError)] };
  }
  if (docs.size >= DOC_CACHE_SIZE) docs.delete(docs.keys().next().value!);
  docs.set(key, entry);
  return entry;
}

/** Makes the answer object of one row. */
type Builder = (row: Row, view: View, walker: Walker, plan: readonly FieldPlan[]) => Record<string, unknown>;

/** Compiled builders by selection set and entity; documents are cached by text, so these live across requests. */
const builders = new WeakMap<SelectionSetNode, Map<string, Builder>>();

/**
 * The builder of a selection set on an entity, compiled to one object literal: rows then get one shape, built without
 * a loop over the plan, and `JSON.stringify` walks them faster. Keys and field names are GraphQL names (validated by
 * the parser), quoted as JSON; keys are computed (`["…"]`), so that an alias `__proto__` is a plain key.
 */
function builderOf(set: SelectionSetNode, entity: EntityModel, plan: readonly FieldPlan[]): Builder {
  let byEntity = builders.get(set);
  if (!byEntity) builders.set(set, (byEntity = new Map()));
  let b = byEntity.get(entity.name);
  if (b) return b;
  const parts = plan.map((p, k) => {
    const key = p.key === '__proto__' ? `[${JSON.stringify(p.key)}]` : JSON.stringify(p.key);
    if (p.kind === 'typename') return `${key}: ${JSON.stringify(entity.name)}`;
    if (p.kind === 'scalar') return `${key}: row[${JSON.stringify(p.name)}] ?? null`;
    if (p.kind === 'ref') return `${key}: walker.ref(plan[${k}], row[${JSON.stringify(p.name)}], view)`;
    return `${key}: walker.collection(plan[${k}], row, view)`;
  });
  b = new Function('row', 'view', 'walker', 'plan', `return { ${parts.join(', ')} };`) as Builder;
  byEntity.set(entity.name, b);
  return b;
}

class Walker {
  constructor(
    readonly dep: Deployment,
    readonly fragments: Record<string, FragmentDefinitionNode>,
    readonly variables: Record<string, unknown>,
    readonly limits: Limits,
    readonly indexingError = false,
  ) {}

  private readonly flat = new WeakMap<SelectionSetNode, Map<string, FieldNode[]>>();

  /** Field nodes of a selection set, fragments flattened for the given type (computed once per set and type). */
  fields(set: SelectionSetNode, typeName: string): FieldNode[] {
    let byType = this.flat.get(set);
    if (!byType) this.flat.set(set, (byType = new Map()));
    let out = byType.get(typeName);
    if (!out) byType.set(typeName, (out = this.flatten(set, typeName)));
    return out;
  }

  private flatten(set: SelectionSetNode, typeName: string): FieldNode[] {
    const out: FieldNode[] = [];
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) out.push(s);
      else if (s.kind === Kind.INLINE_FRAGMENT) {
        if (!s.typeCondition || s.typeCondition.name.value === typeName)
          out.push(...this.fields(s.selectionSet, typeName));
      } else {
        const f = this.fragments[s.name.value];
        if (f && f.typeCondition.name.value === typeName) out.push(...this.fields(f.selectionSet, typeName));
      }
    }
    return out;
  }

  args(typeName: string, node: FieldNode): Record<string, unknown> {
    const type = this.dep.api.getType(typeName) as GraphQLObjectType;
    const def = type.getFields()[node.name.value]!;
    return getArgumentValues(def, node, this.variables) as Record<string, unknown>;
  }

  ctx(view: View): FilterContext {
    const dep = this.dep;
    const table = (name: string) => dep.tables.get(name)!;
    return {
      view,
      entity: (name) => dep.model.byName.get(name) ?? interfaceEntity(dep.model, name)!,
      lookup: (entity, id) => table(entity).get(id, view),
      referencing: (entity, field, id) => allRows(table(entity), view).filter((r) => r[field] === id),
    };
  }

  private readonly plans = new WeakMap<SelectionSetNode, Map<string, FieldPlan[]>>();

  /** What to do for each field of a selection set on an entity: worked out once per request, not per row. */
  plan(entity: EntityModel, set: SelectionSetNode): FieldPlan[] {
    let byEntity = this.plans.get(set);
    if (!byEntity) this.plans.set(set, (byEntity = new Map()));
    let out = byEntity.get(entity.name);
    if (out) return out;
    out = this.fields(set, entity.name).map((node): FieldPlan => {
      const key = node.alias?.value ?? node.name.value;
      const name = node.name.value;
      if (name === '__typename') return { kind: 'typename', entity, key, name, node };
      const f = entity.field.get(name)!;
      if (!f.ref) return { kind: 'scalar', entity, key, name, node };
      // An entity, or an interface: its rows are then each answered as the entity they belong to.
      const target = this.dep.model.byName.get(f.type) ?? interfaceEntity(this.dep.model, f.type)!;
      const table = this.dep.tables.get(f.type)!;
      const kind = !f.list && !f.derivedFrom ? 'ref' : f.derivedFrom ? 'derived' : 'list';
      return { kind, entity, key, name, node, target, table, ...(f.derivedFrom ? { derivedFrom: f.derivedFrom } : {}) };
    });
    byEntity.set(entity.name, out);
    return out;
  }

  /** The answer object of a referenced row, or null. */
  ref(p: FieldPlan, id: unknown, view: View): Record<string, unknown> | null {
    const child = typeof id === 'string' ? p.table!.get(id, view) : undefined;
    return child && p.node.selectionSet
      ? this.row(this.typeOf(child, p.target!), child, p.node.selectionSet, view)
      : null;
  }

  /** The answer list of a list or derived field (a nested collection query), or null. */
  collection(p: FieldPlan, row: Row, view: View): Record<string, unknown>[] | null {
    const ids = row[p.name];
    if (p.kind === 'list' && !Array.isArray(ids)) return null;
    const restrict = p.derivedFrom
      ? (r: Row) => r[p.derivedFrom!] === row.id
      : (r: Row) => (ids as string[]).includes(r.id);
    const rows = runCollection(
      p.table!,
      this.args(p.entity.name, p.node) as CollectionArgs,
      this.ctx(view),
      this.limits,
      restrict,
    );
    return rows.map((r) => this.row(this.typeOf(r, p.target!), r, p.node.selectionSet!, view));
  }

  /** The entity a row is answered as: its own, where it comes from an interface's rows. */
  typeOf(row: Row, declared: EntityModel): EntityModel {
    return rowEntity(this.dep.model, row) ?? declared;
  }

  row(entity: EntityModel, row: Row, set: SelectionSetNode, view: View): Record<string, unknown> {
    const plan = this.plan(entity, set);
    return builderOf(set, entity, plan)(row, view, this, plan);
  }

  meta(node: FieldNode, block: Block): Record<string, unknown> {
    const { view, hashKnown } = resolveBlock(this.dep, block);
    const tl = this.dep.tl;
    const blockObj = {
      number: view.at,
      hash: hashKnown ? tl.hash(view.at) : null,
      timestamp: tl.ts(view.at),
      parentHash: hashKnown ? tl.hash(view.at - 1) : null,
    };
    const value: Record<string, unknown> = {
      block: blockObj,
      deployment: this.dep.id,
      hasIndexingErrors: this.indexingError,
    };
    return this.plain(value, node.selectionSet!, '_Meta_');
  }

  plain(value: Record<string, unknown>, set: SelectionSetNode, typeName: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const node of this.fields(set, typeName)) {
      const key = node.alias?.value ?? node.name.value;
      const v = node.name.value === '__typename' ? typeName : value[node.name.value];
      out[key] =
        node.selectionSet && v && typeof v === 'object'
          ? this.plain(v as Record<string, unknown>, node.selectionSet, '_Block_')
          : (v ?? null);
    }
    return out;
  }
}

/**
 * The rows of an aggregation's root field at one interval: by `timestamp`, then `id`, both descending, the only order
 * graph-node gives them (`docs/aggregations.md`; `query.rs` `build_order`).
 */
function aggregationRows(
  dep: Deployment,
  walker: Walker,
  node: FieldNode,
  args: Record<string, unknown>,
  view: View,
  opts: ExecOptions,
): Record<string, unknown>[] {
  const entity = dep.roots.get(node.name.value)!.entity;
  const table = dep.tables.get(aggregationKey(entity.name, String(args.interval)));
  if (!table) throw new QueryError(`Aggregation \`${entity.name}\` has no interval \`${String(args.interval)}\``);
  const { omit } = opts;
  const ordered = { ...args, orderBy: 'timestamp', orderDirection: 'desc' } as CollectionArgs;
  const rows = runCollection(
    table,
    ordered,
    walker.ctx(view),
    opts.limits,
    undefined,
    omit && ((r) => omit(entity.name, r)),
  );
  opts.served?.(entity.name, rows);
  const out = rows.map((r) => walker.row(entity, r, node.selectionSet!, view));
  if (opts.garble) for (const r of out) opts.garble(entity.name, r);
  opts.garblePage?.(entity.name, out);
  return out;
}

function introspectionOnly(doc: DocumentNode, op: OperationDefinitionNode, keep: FieldNode[]): DocumentNode {
  const only: OperationDefinitionNode = { ...op, selectionSet: { kind: Kind.SELECTION_SET, selections: keep } };
  return { kind: Kind.DOCUMENT, definitions: doc.definitions.map((d) => (d === op ? only : d)) };
}

/** Executes one request against a deployment. Errors answer with `errors` and no `data`, as graph-node does. */
export function executeSubgraph(dep: Deployment, req: GraphQLRequest, opts: ExecOptions): GraphQLResult {
  if (typeof req.query !== 'string') return { errors: [{ message: 'The "query" field is missing in request data' }] };
  const { doc, errors } = load(dep.api, req.query);
  if (!doc) return { errors: errors! };
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const op = typeof req.operationName === 'string' ? ops.find((o) => o.name?.value === req.operationName) : ops[0];
  if (!op) return { errors: [{ message: `Operation ${String(req.operationName)} not found` }] };
  const coerced = getVariableValues(
    dep.api,
    op.variableDefinitions ?? [],
    (req.variables as Record<string, unknown>) ?? {},
  );
  if (coerced.errors) return { errors: coerced.errors.map(translate) };
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const walker = new Walker(dep, fragments, coerced.coerced, opts.limits, opts.indexingError ?? false);
  const data: Record<string, unknown> = {};
  const roots = walker.fields(op.selectionSet, 'Query');
  const intro = roots.filter((n) => n.name.value === '__schema' || n.name.value === '__type');
  try {
    if (intro.length) {
      const r = executeSync({
        schema: dep.api,
        document: introspectionOnly(doc, op, intro),
        variableValues: coerced.coerced,
      });
      Object.assign(data, r.data ?? {});
    }
    for (const node of roots) {
      const key = node.alias?.value ?? node.name.value;
      const name = node.name.value;
      if (name === '__schema' || name === '__type') continue;
      if (name === '__typename') {
        data[key] = 'Query';
        continue;
      }
      const args = walker.args('Query', node);
      if (name === '_meta') {
        data[key] = walker.meta(node, args.block as Block);
        continue;
      }
      const root = dep.roots.get(name)!;
      const { view } = resolveBlock(dep, args.block as Block);
      if (root.entity.aggregation) {
        data[key] = aggregationRows(dep, walker, node, args, view, opts);
        continue;
      }
      const table = dep.tables.get(root.entity.name)!;
      if (!root.many) {
        const row = table.get(String(args.id), view);
        if (row) opts.served?.(root.entity.name, [row]);
        data[key] = row ? walker.row(walker.typeOf(row, root.entity), row, node.selectionSet!, view) : null;
        if (data[key] && opts.garble) opts.garble(root.entity.name, data[key] as Record<string, unknown>);
        continue;
      }
      const { omit } = opts;
      const entity = root.entity.name;
      const rows = runCollection(
        table,
        args as CollectionArgs,
        walker.ctx(view),
        opts.limits,
        undefined,
        omit && ((r) => omit(entity, r)),
      );
      opts.served?.(entity, rows);
      data[key] = rows.map((r) => walker.row(walker.typeOf(r, root.entity), r, node.selectionSet!, view));
      if (opts.garble) for (const r of data[key] as Record<string, unknown>[]) opts.garble(root.entity.name, r);
      opts.garblePage?.(root.entity.name, data[key] as Record<string, unknown>[]);
    }
  } catch (e) {
    if (e instanceof QueryError)
      return { errors: [e.locations ? { message: e.message, locations: e.locations } : { message: e.message }] };
    throw e;
  }
  if (opts.indexingError) {
    const policy = roots.map((n) => walker.args('Query', n).subgraphError).find((p) => p !== undefined);
    const kept: Record<string, unknown> = {};
    if (policy === 'allow') Object.assign(kept, data);
    else
      for (const n of roots)
        if (['_meta', '__schema', '__type'].includes(n.name.value))
          kept[n.alias?.value ?? n.name.value] = data[n.alias?.value ?? n.name.value];
    return { data: kept, errors: [{ message: 'indexing_error' }] };
  }
  return { data };
}
