/** The test schema that has every kind of entity and field (`test/fixtures/subgraphs/every-type.graphql`). */
import { fileURLToPath } from 'node:url';

/** The schema file's path. */
export const EVERY_TYPE_SCHEMA = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));

/**
 * The datasets of the schema added as a subgraph named `name`, written out by hand: its entities in the schema's order,
 * then its aggregation's intervals.
 */
export const everyTypeDatasets = (name: string): string[] =>
  [
    'factories',
    'tokens',
    'pools',
    'swaps',
    'mints',
    'price_ticks',
    'accounts',
    'token_price_stats_hour',
    'token_price_stats_day',
  ].map((t) => `${name}.${t}`);
