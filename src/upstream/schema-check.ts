/**
 * A subgraph's schema text checked as `subgraph add` takes it: it parses, graph-node can lay it out, and its names can
 * be decided. Pure, and run in the parse worker (`parse-worker.ts`), whose bounds a hostile text meets first.
 */
import { decideNames, layoutConflicts } from '../catalog/names.ts';
import { UsageError } from '../errors.ts';
import { parseSchemaModel, SchemaModelError } from '../schemas/entity-model.ts';
import { inert } from '../util/inert.ts';

/** True, or a usage error naming what is wrong: where the text does not parse, or what graph-node cannot lay out. */
export function checkSchemaText(at: { readonly name: string; readonly text: string }): true {
  let model: ReturnType<typeof parseSchemaModel>;
  try {
    model = parseSchemaModel(at.name, at.text);
  } catch (e) {
    if (e instanceof SchemaModelError) throw new UsageError(e.message);
    throw e;
  }
  const conflicts = layoutConflicts(model);
  if (conflicts.length) throw new UsageError(inert(conflicts.join('; ')));
  decideNames(model);
  return true;
}
