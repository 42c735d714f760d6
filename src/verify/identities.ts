/**
 * The identities `verify` checks: each ties a count of stored rows to a counter the upstream's own mappings keep, so
 * that a row a page left out (while the counter still counts it) shows as a mismatch. Each is derived from the
 * mapping sources of DODOEX/dodoex_v2_subgraph at commit 0eb5baca449800f268ad9378f367bd1906ebae24 (`MAPPINGS` below):
 * the file and handler are named with each.
 *
 * Counters are read from the upstream at the block the checked rows were read at (`counters.ts`); the stored side is
 * a count over the warehouse, grouped as the counter is (`found`: SQL with `$1` the chain id and, for day identities,
 * `$2` and `$3` the first and last day checked, as Unix seconds of their starts).
 *
 * Left out on purpose, because the upstream's own quirks break them:
 * - `DodoZoo.pairCount` and `crowdpoolingCount` count creations, and `poolFactory.ts` `handleRemoveDPP`/`DVM`/`DSP`/
 *   `Registry`/`CP` delete the row without decrementing them: the count can exceed the rows for good.
 * - `TokenDayData.txns` is incremented twice per swap (`dayUpdates.ts` `updateTokenDayData`, then `helpers.ts`
 *   `updateStatistics`) and decremented by `smartRoute.ts` `trimTokenData`: only the rows' presence is checked.
 * - `DodoZoo.txCount` counts swaps, smart-route orders and crowd-pool bids (`pool.ts`, `smartRoute.ts`,
 *   `crowdPooling.ts`), with no table of its own to count against; `Pair.txCount` repeats `PairDayData.txns` summed.
 * - `PairHourData` is left to the day identities, which cost 24 times fewer requests.
 * - The liquidity list's `totalCount` is checked against each answer while it is read (`paginate/list.ts`).
 */

/** Where the mappings are read. */
export const MAPPINGS = 'DODOEX/dodoex_v2_subgraph@0eb5baca src/mappings';

/** What a counter row says: which group (a pool, a token, a crowd pool, or none), which day (or none), and how many. */
export interface CounterValue {
  readonly key: string;
  readonly day: number | null;
  readonly expected: number;
}

/** The upstream entity an identity reads its counters from, and how. */
export interface CounterSource {
  /** The deployment's schema (`dodoex` or `token`) and the entity. */
  readonly schema: string;
  readonly entity: string;
  /** The fields selected. */
  readonly select: string;
  /** Rows filtered to the days checked (`date_gte`, `date_lte`); otherwise every row. */
  readonly byDay: boolean;
  /** The counter of a row. */
  value(row: Record<string, unknown>): CounterValue;
}

/** What a group is, for the report: the column a mismatch's key goes in. */
export type KeyKind = 'pool' | 'token' | 'crowd pool' | 'id';

/** One identity. */
export interface Identity {
  readonly name: string;
  /** The dataset whose rows are counted. */
  readonly dataset: string;
  readonly keyKind?: KeyKind;
  readonly counter: CounterSource;
  /** The warehouse's count, grouped as the counter: columns `key`, `day`, `found`; `{table}` is the dataset's table. */
  readonly found: string;
  /**
   * Whether groups the upstream no longer holds are left out (crowd pools can be removed, their bid positions kept);
   * otherwise a stored group with no counter is a mismatch with 0 expected.
   */
  readonly countedOnly?: boolean;
  /** The mapping that makes it hold. */
  readonly source: string;
  /** What a mismatch means. */
  readonly proves: string;
}

const DAY = 86_400;
const num = (v: unknown) => Number(v);

/** Rows of a day identity's table in the days checked, by their time column. */
const inDays = (column: string) => `chain_id = $1 AND ${column} >= $2 AND ${column} < $3 + ${DAY}`;
/** The day of a time column. */
const dayOf = (column: string) => `(${column} // ${DAY}) * ${DAY}`;

/** Per day: the exchange's day row, read once for the day identities that use it. */
const DODO_DAY: Omit<CounterSource, 'value'> = {
  schema: 'dodoex',
  entity: 'DodoDayData',
  select: 'id date txCount uniqueUsersCount',
  byDay: true,
};
/** Per pool and day. */
const PAIR_DAY: Omit<CounterSource, 'value'> = {
  schema: 'dodoex',
  entity: 'PairDayData',
  select: 'id date pairAddress txns',
  byDay: true,
};
/** The exchange's totals (one row). */
const ZOO: Omit<CounterSource, 'value'> = {
  schema: 'dodoex',
  entity: 'DodoZoo',
  select: 'id tokenCount uniqueUsersCount',
  byDay: false,
};

export const IDENTITIES: readonly Identity[] = [
  {
    name: 'swaps per pool and day',
    dataset: 'dodoex.swaps',
    keyKind: 'pool',
    counter: { ...PAIR_DAY, value: (r) => ({ key: String(r.pairAddress), day: num(r.date), expected: num(r.txns) }) },
    found: `SELECT pair_id AS key, ${dayOf('timestamp')} AS day, count(*) AS found FROM {table} WHERE ${inDays('timestamp')} GROUP BY ALL`,
    source: `${MAPPINGS}/dodoex/pool.ts handleDODOSwap, classicPoolFromV1.ts handleSellBaseToken/handleBuyBaseToken: each swap saves one Swap of its pool and calls helpers.ts updateStatistics, whose dayUpdates.ts updatePairDayData adds 1 to that pool's PairDayData.txns of the swap's day`,
    proves: "every swap of the pool's day is stored",
  },
  {
    name: 'pool day rows',
    dataset: 'dodoex.pair_day_datas',
    keyKind: 'pool',
    counter: { ...PAIR_DAY, value: (r) => ({ key: String(r.pairAddress), day: num(r.date), expected: 1 }) },
    found: `SELECT pair_address AS key, date AS day, count(*) AS found FROM {table} WHERE ${inDays('date')} GROUP BY ALL`,
    source: `${MAPPINGS}/dodoex/dayUpdates.ts updatePairDayData: one PairDayData per pool and day with a swap, id <pool>-<day>`,
    proves: "the pool's day row is stored",
  },
  {
    name: 'transactions per day',
    dataset: 'dodoex.transactions',
    counter: { ...DODO_DAY, value: (r) => ({ key: '', day: num(r.date), expected: num(r.txCount) }) },
    found: `SELECT '' AS key, ${dayOf('timestamp')} AS day, count(*) AS found FROM {table} WHERE ${inDays('timestamp')} GROUP BY ALL`,
    source: `${MAPPINGS}/dodoex/transaction.ts addTransaction: a new Transaction (its timestamp the event's) calls dayUpdates.ts increaseTxCount, which adds 1 to DodoDayData.txCount of that day; nothing else changes txCount`,
    proves: 'every transaction of the day is stored',
  },
  {
    name: 'user days per day',
    dataset: 'dodoex.user_day_datas',
    counter: { ...DODO_DAY, value: (r) => ({ key: '', day: num(r.date), expected: num(r.uniqueUsersCount) }) },
    found: `SELECT '' AS key, date AS day, count(*) AS found FROM {table} WHERE ${inDays('date')} GROUP BY ALL`,
    source: `${MAPPINGS}/dodoex/dayUpdates.ts updateUserDayData: a new UserDayData of the day adds 1 to DodoDayData.uniqueUsersCount of that day`,
    proves: "every user's day row of the day is stored",
  },
  {
    name: 'exchange day rows',
    dataset: 'dodoex.dodo_day_datas',
    counter: { ...DODO_DAY, value: (r) => ({ key: '', day: num(r.date), expected: 1 }) },
    found: `SELECT '' AS key, date AS day, count(*) AS found FROM {table} WHERE ${inDays('date')} GROUP BY ALL`,
    source: `${MAPPINGS}/dodoex/dayUpdates.ts getDodoDayData: one DodoDayData per day, id the day's number`,
    proves: "the exchange's day row is stored",
  },
  {
    name: 'token day rows',
    dataset: 'dodoex.token_day_datas',
    keyKind: 'token',
    counter: {
      schema: 'dodoex',
      entity: 'TokenDayData',
      select: 'id date token { id }',
      byDay: true,
      value: (r) => ({ key: String((r.token as { id: unknown }).id), day: num(r.date), expected: 1 }),
    },
    found: `SELECT token_id AS key, date AS day, count(*) AS found FROM {table} WHERE ${inDays('date')} GROUP BY ALL`,
    source: `${MAPPINGS}/dodoex/dayUpdates.ts updateTokenDayData: one TokenDayData per token and day, id <token>-<day> (its txns are not a count: see above)`,
    proves: "the token's day row is stored",
  },
  {
    name: 'tokens',
    dataset: 'dodoex.tokens',
    counter: { ...ZOO, value: (r) => ({ key: '', day: null, expected: num(r.tokenCount) }) },
    found: `SELECT '' AS key, NULL AS day, count(*) AS found FROM {table} WHERE chain_id = $1`,
    source: `${MAPPINGS}/dodoex/helpers.ts createToken, createTokenByCall: a new Token adds 1 to DodoZoo.tokenCount; tokens are never removed`,
    proves: 'every token is stored',
  },
  {
    name: 'users',
    dataset: 'dodoex.users',
    counter: { ...ZOO, value: (r) => ({ key: '', day: null, expected: num(r.uniqueUsersCount) }) },
    found: `SELECT '' AS key, NULL AS day, count(*) AS found FROM {table} WHERE chain_id = $1`,
    source: `${MAPPINGS}/dodoex/helpers.ts createUser: a new User adds 1 to DodoZoo.uniqueUsersCount; users are never removed`,
    proves: 'every user is stored',
  },
  {
    name: 'bid positions per crowd pool',
    dataset: 'dodoex.bid_positions',
    keyKind: 'crowd pool',
    counter: {
      schema: 'dodoex',
      entity: 'CrowdPooling',
      select: 'id investorsCount',
      byDay: false,
      value: (r) => ({ key: String(r.id), day: null, expected: num(r.investorsCount) }),
    },
    found: `SELECT cp_id AS key, NULL AS day, count(*) AS found FROM {table} WHERE chain_id = $1 GROUP BY ALL`,
    countedOnly: true,
    source: `${MAPPINGS}/dodoex/crowdPooling.ts handleBid: a bid whose bidder has no BidPosition in the pool yet creates one and adds 1 to CrowdPooling.investorsCount; positions are never removed (a removed pool's are not compared)`,
    proves: 'every bid position of the crowd pool is stored',
  },
  {
    name: 'factory tokens',
    dataset: 'token.tokens',
    counter: {
      schema: 'token',
      entity: 'DodoToken',
      select: 'id tokens',
      byDay: false,
      value: (r) => ({ key: '', day: null, expected: num(r.tokens) }),
    },
    found: `SELECT '' AS key, NULL AS day, count(*) AS found FROM {table} WHERE chain_id = $1`,
    source: `${MAPPINGS}/token/factory.ts handleNewERC20, factoryv2.ts: a new Token adds 1 to DodoToken.tokens; no other handler creates or removes one`,
    proves: 'every token of the factories is stored',
  },
];

/** The datasets some identity checks. */
export const VERIFIED_DATASETS: ReadonlySet<string> = new Set(IDENTITIES.map((i) => i.dataset));
