-- Tracked value: the USD figures that one manipulable price cannot inflate. Built on two inputs that the exporter
-- defines before this file: `reports.trusted_tokens (chain_id, token, symbol)`, the trusted set per chain
-- (src/config/trusted-tokens.json, or the config's `trustedTokens`), and `reports.min_tracked_liquidity_usd()`.
--
-- A token's USD price counts ("priced") on a day or at a snapshot when the token is trusted, or when it is backed: some
-- pool pairs it with a trusted token whose side holds at least min_tracked_liquidity_usd(). Token-level figures (value
-- and volume per token, smart-route volume) count priced tokens. Pool-level figures count trusted sides only, so that
-- a pool of untrusted tokens (however well priced elsewhere) holding absurd amounts adds nothing. The rules are those
-- of Uniswap's subgraph (Uniswap/v2-subgraph 25d90d5c, src/common/pricing.ts: WHITELIST for the sides, derived prices
-- with MINIMUM_LIQUIDITY_THRESHOLD_ETH for tokens): TVL (getTrackedLiquidityUSD): both sides trusted, their sum; one,
-- twice that side; neither, zero. Volume (getTrackedVolumeUSD): both, the average of the two sides (one trade is
-- counted once); one, that side; neither, zero.

-- Both sides of every pool day, from the day data: reserves, prices, volumes and fees per token.
CREATE OR REPLACE VIEW reports.pool_day_sides AS
SELECT chain_id, CAST(to_timestamp(date) AS DATE) AS day, pair_address AS pool, 'base' AS side, base_token_id AS token,
       base_token_reserve AS reserve, base_usd_price AS price_usd, volume_base AS volume, fee_base AS fee
FROM dodoex.pair_day_datas
UNION ALL
SELECT chain_id, CAST(to_timestamp(date) AS DATE), pair_address, 'quote', quote_token_id,
       quote_token_reserve, quote_usd_price, volume_quote, fee_quote
FROM dodoex.pair_day_datas;

-- Tokens whose USD price counts on a day: trusted ones, and those backed by enough liquidity against a trusted token.
-- `price_usd` is the median of the prices the day data recorded for the token that day.
CREATE OR REPLACE VIEW reports.priced_tokens_daily AS
WITH sides AS (
  SELECT s.*, t.token IS NOT NULL AS trusted
  FROM reports.pool_day_sides s LEFT JOIN reports.trusted_tokens t ON t.chain_id = s.chain_id AND t.token = s.token
), backing AS (
  SELECT o.chain_id, o.day, o.token, max(t.reserve * t.price_usd) AS backing_usd, arg_max(t.token, t.reserve * t.price_usd) AS backed_by
  FROM sides t JOIN sides o ON o.chain_id = t.chain_id AND o.day = t.day AND o.pool = t.pool AND o.side <> t.side
  WHERE t.trusted AND NOT o.trusted
  GROUP BY ALL
)
SELECT s.chain_id, s.day, s.token, median(s.price_usd) AS price_usd,
       bool_or(s.trusted) AS trusted, any_value(b.backed_by) AS backed_by, any_value(b.backing_usd) AS backing_usd
FROM sides s LEFT JOIN backing b ON b.chain_id = s.chain_id AND b.day = s.day AND b.token = s.token
WHERE s.trusted OR b.backing_usd >= reports.min_tracked_liquidity_usd()
GROUP BY s.chain_id, s.day, s.token;

-- Tracked and untracked value of every pool day (a side counts when its token is trusted).
CREATE OR REPLACE VIEW reports.pool_day_tracked AS
WITH s AS (
  SELECT s.*, t.token IS NOT NULL AS trusted
  FROM reports.pool_day_sides s LEFT JOIN reports.trusted_tokens t ON t.chain_id = s.chain_id AND t.token = s.token
), pool AS (
  SELECT chain_id, day, pool,
         any_value(token) FILTER (WHERE side = 'base') AS base_token, any_value(token) FILTER (WHERE side = 'quote') AS quote_token,
         any_value(trusted) FILTER (WHERE side = 'base') AS base_trusted, any_value(trusted) FILTER (WHERE side = 'quote') AS quote_trusted,
         sum(reserve * price_usd) FILTER (WHERE side = 'base') AS base_value, sum(reserve * price_usd) FILTER (WHERE side = 'quote') AS quote_value,
         sum(volume * price_usd) FILTER (WHERE side = 'base') AS base_volume, sum(volume * price_usd) FILTER (WHERE side = 'quote') AS quote_volume,
         sum(fee * price_usd) FILTER (WHERE side = 'base') AS base_fee, sum(fee * price_usd) FILTER (WHERE side = 'quote') AS quote_fee
  FROM s GROUP BY chain_id, day, pool
)
SELECT chain_id, day, pool, base_token, quote_token, base_trusted, quote_trusted,
       CASE WHEN base_trusted AND quote_trusted THEN base_value + quote_value WHEN base_trusted THEN 2 * base_value
            WHEN quote_trusted THEN 2 * quote_value ELSE 0 END AS tvl_usd,
       base_value + quote_value AS tvl_untracked_usd,
       CASE WHEN base_trusted AND quote_trusted THEN (base_volume + quote_volume) / 2 WHEN base_trusted THEN base_volume
            WHEN quote_trusted THEN quote_volume ELSE 0 END AS volume_usd,
       (CASE WHEN base_trusted THEN base_fee ELSE 0 END) + (CASE WHEN quote_trusted THEN quote_fee ELSE 0 END) AS fees_usd,
       base_fee + quote_fee AS fees_untracked_usd
FROM pool;

-- Both sides of every pool in every liquidity-list snapshot: reserves and the service's token prices.
CREATE OR REPLACE VIEW reports.pool_snapshot_sides AS
SELECT chain_id, _taken_at AS time, id AS pool, 'base' AS side, base_token_id AS token, base_token_symbol AS symbol,
       base_reserve AS reserve, base_token_usd_price AS price_usd
FROM list.liquidity
UNION ALL
SELECT chain_id, _taken_at, id, 'quote', quote_token_id, quote_token_symbol, quote_reserve, quote_token_usd_price
FROM list.liquidity;

-- Tokens whose USD price counts at a snapshot, by the same rule as per day.
CREATE OR REPLACE VIEW reports.priced_tokens_snapshot AS
WITH sides AS (
  SELECT s.*, t.token IS NOT NULL AS trusted
  FROM reports.pool_snapshot_sides s LEFT JOIN reports.trusted_tokens t ON t.chain_id = s.chain_id AND t.token = s.token
), backing AS (
  SELECT o.chain_id, o.time, o.token, max(t.reserve * t.price_usd) AS backing_usd
  FROM sides t JOIN sides o ON o.chain_id = t.chain_id AND o.time = t.time AND o.pool = t.pool AND o.side <> t.side
  WHERE t.trusted AND NOT o.trusted
  GROUP BY ALL
)
SELECT DISTINCT s.chain_id, s.time, s.token
FROM sides s LEFT JOIN backing b ON b.chain_id = s.chain_id AND b.time = s.time AND b.token = s.token
WHERE s.trusted OR b.backing_usd >= reports.min_tracked_liquidity_usd();

-- Tracked and untracked TVL of every pool at every snapshot (a side counts when its token is trusted).
CREATE OR REPLACE VIEW reports.pool_snapshot_tracked AS
WITH s AS (
  SELECT s.*, t.token IS NOT NULL AS trusted
  FROM reports.pool_snapshot_sides s LEFT JOIN reports.trusted_tokens t ON t.chain_id = s.chain_id AND t.token = s.token
), pool AS (
  SELECT chain_id, time, pool,
         any_value(trusted) FILTER (WHERE side = 'base') AS base_trusted, any_value(trusted) FILTER (WHERE side = 'quote') AS quote_trusted,
         sum(reserve * price_usd) FILTER (WHERE side = 'base') AS base_value, sum(reserve * price_usd) FILTER (WHERE side = 'quote') AS quote_value
  FROM s GROUP BY chain_id, time, pool
)
SELECT pool.*,
       CASE WHEN base_trusted AND quote_trusted THEN base_value + quote_value WHEN base_trusted THEN 2 * base_value
            WHEN quote_trusted THEN 2 * quote_value ELSE 0 END AS tvl_usd,
       base_value + quote_value AS tvl_untracked_usd
FROM pool;
