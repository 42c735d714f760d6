/** `pool-export schema check`: compares the catalog with each upstream's introspected schema and prints the drift. */

import { DATASETS } from '../catalog/catalog.ts';
import { chainName } from '../config/chains.ts';
import { loadConfig } from '../config/config.ts';
import { UsageError } from '../errors.ts';
import { canonicalSchema, loadSchemaModel } from '../schemas/entity-model.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { collectionRoots } from '../upstream/endpoint-probe.ts';
import { withRetries } from '../upstream/retry.ts';
import { endpointFor } from '../upstream/routes.ts';
import { type Drift, INTROSPECTION_QUERY, type Introspected, schemaDrift } from '../upstream/schema-drift.ts';
import { terminalWidth } from '../util/display.ts';
import { inert, jsonSafe } from '../util/inert.ts';
import { wrap } from '../util/wrap.ts';
import type { CommandBody } from './command-body.ts';
import { chainsOption, list, parseChains } from './options.ts';

interface Args {
  action?: string | undefined;
  chains?: string | undefined;
  schemas?: string | undefined;
  config?: string | undefined;
  format: 'text' | 'json';
}

const SUBGRAPH_SCHEMAS = [...new Set(DATASETS.filter((d) => d.schema !== 'list').map((d) => d.schema))];

/** The fields the catalog reads, per entity, for one schema. */
function readFields(schema: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const ds of DATASETS.filter((d) => d.schema === schema)) {
    const set = out.get(ds.entity) ?? new Set<string>();
    for (const c of ds.columns) set.add(c.field);
    out.set(ds.entity, set);
  }
  return out;
}

/** The yargs module of the `schema` command. */
export const schemaCommand: CommandBody<Args> = {
  builder: (y) =>
    chainsOption(
      y.positional('action', { choices: ['check'] as const, describe: 'check: introspect every endpoint and compare' }),
      "comma list of chain names or ids (default: the config's chains)",
    )
      .option('schemas', { type: 'string', describe: `comma list of ${SUBGRAPH_SCHEMAS.join(', ')} (default: all)` })
      .option('config', {
        type: 'string',
        describe: 'JSON config file (default: ./pool-export.config.json if present)',
      })
      .option('format', {
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: 'text for people, json for scripts',
      }),
  handler: async (a) => {
    const config = loadConfig(a.config ? { configFile: a.config } : {});
    if (!config.apiKey) throw new UsageError('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)');
    const chains = parseChains(a.chains) ?? config.chains;
    const schemas = (list(a.schemas) ?? SUBGRAPH_SCHEMAS).map((s) => canonicalSchema(s) ?? s);
    for (const s of schemas)
      if (!SUBGRAPH_SCHEMAS.includes(s))
        throw new UsageError(`unknown schema "${s}" in --schemas; valid: ${SUBGRAPH_SCHEMAS.join(', ')}`);
    const client = UpstreamClient.forConfig(config);
    const report: {
      chain: string;
      schema: string;
      endpoint: string;
      error?: string;
      drift: Drift[];
      roots?: Record<string, string>;
    }[] = [];
    for (const schema of schemas) {
      const model = loadSchemaModel(schema);
      const read = readFields(schema);
      const ds = DATASETS.find((d) => d.schema === schema)!;
      for (const chainId of chains) {
        const endpoint = endpointFor(config, ds, chainId);
        try {
          const answer = await withRetries(() => client.request<Introspected>(endpoint, INTROSPECTION_QUERY, {}), {
            maxAttempts: config.maxAttempts,
          });
          // The root field each entity is read through there, found by its return type (as a run finds it).
          const query = answer.data.__schema.types.find((t) => t.name === 'Query')?.fields ?? [];
          const found = collectionRoots(query);
          const roots = Object.fromEntries(
            model.entities.filter((e) => found.has(e.name)).map((e) => [e.name, found.get(e.name)!]),
          );
          report.push({
            chain: chainName(chainId),
            schema,
            endpoint: endpoint.label,
            drift: schemaDrift(model, answer.data, read),
            roots,
          });
        } catch (e) {
          report.push({
            chain: chainName(chainId),
            schema,
            endpoint: endpoint.label,
            error: (e as Error).message,
            drift: [],
          });
        }
      }
    }
    const breaking = report.reduce((n, r) => n + r.drift.filter((d) => d.severity === 'breaking').length, 0);
    const label = { breaking: 'BREAKING   ', unavailable: 'unavailable', notice: 'notice     ' } as const;
    const failed = report.filter((r) => r.error).length;
    if (a.format === 'json')
      process.stdout.write(`${jsonSafe(JSON.stringify({ breaking, failed, endpoints: report }, null, 2))}\n`);
    else {
      // Wrapped to the terminal (or COLUMNS); one line per item when the output goes to a file or a pipe.
      const width = Math.max(40, terminalWidth().width ?? Number.POSITIVE_INFINITY);
      for (const r of report) {
        const head = `${r.schema} on ${r.chain}`;
        if (r.error) process.stdout.write(`${head}: could not introspect: ${inert(r.error)}\n`);
        else {
          process.stdout.write(
            r.drift.length ? `${head}: ${r.drift.length} difference(s)\n` : `${head}: matches the catalog\n`,
          );
          for (const d of r.drift)
            process.stdout.write(`${wrap(inert(d.what), { width, first: `  ${label[d.severity]} `, indent: 14 })}\n`);
          const roots = Object.entries(r.roots ?? {}).map(([e, f]) => `${e} → ${inert(f)}`);
          process.stdout.write(`${wrap(roots.join(', '), { width, first: '  root fields: ', indent: 4 })}\n`);
        }
      }
      process.stdout.write(
        breaking
          ? `\n${breaking} breaking difference(s): the datasets that read these fields will fail until the upstream is fixed or the catalog (src/schemas/*.graphql) is updated\n`
          : `\nno breaking drift in ${report.length - failed} endpoint(s)${failed ? `; ${failed} could not be introspected` : ''}\n`,
      );
    }
    if (breaking || failed) process.exitCode = 1;
  },
};
