-- Tracked value: the USD figures that a token's owner cannot inflate. Built on two inputs that the exporter defines
-- before this file: `reports.trusted_tokens (chain_id, token, symbol)`, the trusted set per chain
-- (src/config/trusted-tokens.json, or the config's `trustedTokens`), and `reports.min_tracked_liquidity_usd()`.
--
-- Prices. A trusted token keeps its upstream price. Any other token's upstream price is set by whichever pool traded
-- it last, a pool its owner may control (DODOEX/dodoex_v2_subgraph 0eb5baca, src/mappings/dodoex/pool.ts
-- handleDODOSwap: base.usdPrice = quote.usdPrice × lastTradePrice), so it gets a *derived* price instead: the price at
-- which the pool that backs it best trades it against a trusted token, times that token's price. This is Uniswap's
-- rule (Uniswap/v2-subgraph 25d90d5c, src/common/pricing.ts findEthPerToken: through the whitelisted pair with the
-- most liquidity, above MINIMUM_LIQUIDITY_THRESHOLD_ETH), with one change: DODO's PMM pools are not priced by their
-- reserves, so the price is what the pool traded at. Per day, the day's swaps: volumeQuote ÷ volumeBase of the pool's
-- PairDayData (summed from the day's swaps: helpers.ts updateStatistics, called by handleDODOSwap). Per liquidity-list
-- snapshot, the pool's lastTradePrice (quote per base of its last swap: handleDODOSwap). "Backs best": the most trusted
-- value in the pool, and at least min_tracked_liquidity_usd(). A day without a trade in such a pool carries the last
-- derived price forward for up to reports.price_carry_days() days; past that the token has no tracked price.
--
-- The bound. A price can be wash-traded in a pool its owner controls, but the trusted tokens in its pools are real: an
-- untrusted token's tracked value on a day (or snapshot) is at most its *backing*, the trusted value of every pool
-- that pairs it with a trusted token then (what selling it into those pools could pay out at most), and its tracked
-- volume on a day is at most the trusted volume of those pools that day. Each pool's side of the token counts its
-- share of the bounded value, so the pools' untrusted sides never add up to more than the token's tracked value.
--
-- Pools. A side of a trusted token counts at its upstream price. An untrusted side counts at its share of its token's
-- tracked value when the pool has a trusted side (nothing when the token has no tracked price); a pool of two
-- untrusted tokens counts nothing (Uniswap's getTrackedLiquidityUSD). No pool type is doubled: every pool of DODO's
-- subgraph (DVM, DPP, DSP, GSP, and the V1 CLASSICAL pools, whose base and quote are deposited separately) is a PMM
-- pool that can hold almost all its value on one side, so twice the trusted side is no estimate of it. Pool volume:
-- both sides trusted, their average (a trade is counted once); one, that side; neither, zero (getTrackedVolumeUSD).

-- Days a derived price stays good without a new trade in a backing pool.
CREATE OR REPLACE MACRO reports.price_carry_days() AS 7;

-- A token's tracked value: a trusted token at its pools' upstream prices; another at its tracked price, up to its
-- backing (zero without a tracked price).
CREATE OR REPLACE MACRO reports.token_tracked_value(trusted, reserve, price_usd, backing_usd, value_untracked_usd) AS
  CASE WHEN trusted THEN value_untracked_usd WHEN price_usd IS NOT NULL THEN least(reserve * price_usd, backing_usd) ELSE 0 END;

-- The part of each pool's side of a token that counts: its tracked value over its value at the tracked price.
CREATE OR REPLACE MACRO reports.token_tracked_share(trusted, reserve, price_usd, backing_usd) AS
  CASE WHEN trusted THEN 1 WHEN reserve * price_usd > 0 THEN least(1, backing_usd / (reserve * price_usd)) ELSE 0 END;

-- A pool side's tracked value: a trusted token at its upstream price; an untrusted one beside a trusted side at its
-- token's tracked price and share; nothing in a pool of two untrusted tokens.
CREATE OR REPLACE MACRO reports.side_tracked_value(trusted, other_trusted, reserve, price_usd, tracked_price_usd, share) AS
  CASE WHEN trusted THEN reserve * price_usd WHEN other_trusted THEN coalesce(reserve * tracked_price_usd * share, 0) ELSE 0 END;

-- Both sides of every pool day, each with the other side beside it: reserves, upstream prices, volumes and fees, and
-- `trade_price`, the side's token in units of the other token at the day's swaps (null without a trade).
CREATE OR REPLACE VIEW reports.pool_day_sides AS
WITH d AS (
  SELECT *, CAST(to_timestamp(date) AS DATE) AS day FROM dodoex.pair_day_datas
), s AS (
  SELECT chain_id, day, pair_address AS pool, 'base' AS side, base_token_id AS token, base_token_reserve AS reserve,
         base_usd_price AS price_usd, volume_base AS volume, fee_base AS fee, quote_token_id AS other_token,
         quote_token_reserve AS other_reserve, quote_usd_price AS other_price_usd, volume_quote AS other_volume,
         CASE WHEN volume_base > 0 AND volume_quote > 0 THEN volume_quote / volume_base END AS trade_price
  FROM d
  UNION ALL
  SELECT chain_id, day, pair_address, 'quote', quote_token_id, quote_token_reserve, quote_usd_price, volume_quote, fee_quote,
         base_token_id, base_token_reserve, base_usd_price, volume_base,
         CASE WHEN volume_base > 0 AND volume_quote > 0 THEN volume_base / volume_quote END
  FROM d
)
SELECT s.*, t.token IS NOT NULL AS trusted, o.token IS NOT NULL AS other_trusted
FROM s
LEFT JOIN reports.trusted_tokens t ON t.chain_id = s.chain_id AND t.token = s.token
LEFT JOIN reports.trusted_tokens o ON o.chain_id = s.chain_id AND o.token = s.other_token;

-- Every token of every pool day with its tracked price: `upstream_price_usd` (the median the day data recorded),
-- `price_usd` (trusted: the upstream one; otherwise derived, or null), where a derived price comes from (`price_source`
-- 'derived' or 'carried', `price_day`, `via_pool`, `via_token`, `via_backing_usd`), and the bound: `backing_usd` and
-- `backing_volume_usd` (null for a trusted token). `reserve` and `value_untracked_usd` sum the token's pools.
CREATE OR REPLACE VIEW reports.token_prices_daily AS
WITH sides AS MATERIALIZED (
  -- Read once for the two uses below.
  SELECT * FROM reports.pool_day_sides
), backing AS (
  -- Each pool day pairing an untrusted token with a trusted one: the trusted side's value and volume, and the price
  -- of the untrusted token at the pool's trades that day.
  SELECT chain_id, day, token, pool, other_token AS via_token, other_reserve * other_price_usd AS backing_usd,
         other_volume * other_price_usd AS backing_volume_usd, trade_price * other_price_usd AS trade_price_usd
  FROM sides
  WHERE other_trusted AND NOT trusted
), derived AS (
  -- The day's derived price: through the pool with the most trusted value among those that traded the token.
  SELECT chain_id, day, token, pool, via_token, backing_usd, trade_price_usd
  FROM backing
  WHERE trade_price_usd > 0 AND backing_usd >= reports.min_tracked_liquidity_usd()
  QUALIFY row_number() OVER (PARTITION BY chain_id, day, token ORDER BY backing_usd DESC, pool) = 1
), bound AS (
  SELECT chain_id, day, token, sum(backing_usd) AS backing_usd, sum(backing_volume_usd) AS backing_volume_usd
  FROM backing GROUP BY ALL
), tokens AS (
  SELECT chain_id, day, token, bool_or(trusted) AS trusted, sum(reserve) AS reserve, median(price_usd) AS upstream_price_usd,
         sum(reserve * price_usd) AS value_untracked_usd
  FROM sides GROUP BY ALL
), priced AS (
  -- The last derived price up to this day (the same day's when there is one).
  SELECT t.*, d.day AS price_day, d.pool AS via_pool, d.via_token, d.backing_usd AS via_backing_usd, d.trade_price_usd,
         NOT t.trusted AND t.day - d.day <= reports.price_carry_days() AS derived
  FROM tokens t ASOF LEFT JOIN derived d ON d.chain_id = t.chain_id AND d.token = t.token AND t.day >= d.day
)
SELECT p.chain_id, p.day, p.token, p.trusted, p.reserve, p.upstream_price_usd,
       CASE WHEN p.trusted THEN p.upstream_price_usd WHEN p.derived THEN p.trade_price_usd END AS price_usd,
       CASE WHEN p.trusted THEN 'trusted' WHEN p.derived AND p.price_day = p.day THEN 'derived' WHEN p.derived THEN 'carried' END AS price_source,
       CASE WHEN p.derived THEN p.price_day END AS price_day, CASE WHEN p.derived THEN p.via_pool END AS via_pool,
       CASE WHEN p.derived THEN p.via_token END AS via_token, CASE WHEN p.derived THEN p.via_backing_usd END AS via_backing_usd,
       CASE WHEN NOT p.trusted THEN coalesce(b.backing_usd, 0) END AS backing_usd,
       CASE WHEN NOT p.trusted THEN coalesce(b.backing_volume_usd, 0) END AS backing_volume_usd,
       p.value_untracked_usd
FROM priced p LEFT JOIN bound b ON b.chain_id = p.chain_id AND b.day = p.day AND b.token = p.token;

-- Tracked value and share of every token day.
CREATE OR REPLACE VIEW reports.token_value_daily AS
SELECT *,
       reports.token_tracked_value(trusted, reserve, price_usd, backing_usd, value_untracked_usd) AS value_usd,
       reports.token_tracked_share(trusted, reserve, price_usd, backing_usd) AS share
FROM reports.token_prices_daily;

-- Tracked and untracked value, volume and fees of every pool day.
CREATE OR REPLACE VIEW reports.pool_day_tracked AS
WITH s AS (
  SELECT s.*,
         reports.side_tracked_value(s.trusted, s.other_trusted, s.reserve, s.price_usd, v.price_usd, v.share) AS tracked_value
  FROM reports.pool_day_sides s
  LEFT JOIN reports.token_value_daily v ON v.chain_id = s.chain_id AND v.day = s.day AND v.token = s.token
), pool AS (
  SELECT chain_id, day, pool,
         any_value(token) FILTER (WHERE side = 'base') AS base_token, any_value(token) FILTER (WHERE side = 'quote') AS quote_token,
         any_value(trusted) FILTER (WHERE side = 'base') AS base_trusted, any_value(trusted) FILTER (WHERE side = 'quote') AS quote_trusted,
         sum(tracked_value) FILTER (WHERE side = 'base') AS base_tracked, sum(tracked_value) FILTER (WHERE side = 'quote') AS quote_tracked,
         sum(reserve * price_usd) FILTER (WHERE side = 'base') AS base_value, sum(reserve * price_usd) FILTER (WHERE side = 'quote') AS quote_value,
         sum(volume * price_usd) FILTER (WHERE side = 'base') AS base_volume, sum(volume * price_usd) FILTER (WHERE side = 'quote') AS quote_volume,
         sum(fee * price_usd) FILTER (WHERE side = 'base') AS base_fee, sum(fee * price_usd) FILTER (WHERE side = 'quote') AS quote_fee
  FROM s GROUP BY chain_id, day, pool
)
SELECT chain_id, day, pool, base_token, quote_token, base_trusted, quote_trusted,
       base_tracked + quote_tracked AS tvl_usd,
       base_value + quote_value AS tvl_untracked_usd,
       CASE WHEN base_trusted AND quote_trusted THEN (base_volume + quote_volume) / 2 WHEN base_trusted THEN base_volume
            WHEN quote_trusted THEN quote_volume ELSE 0 END AS volume_usd,
       (CASE WHEN base_trusted THEN base_fee ELSE 0 END) + (CASE WHEN quote_trusted THEN quote_fee ELSE 0 END) AS fees_usd,
       base_fee + quote_fee AS fees_untracked_usd
FROM pool;

-- Both sides of every pool in every liquidity-list snapshot, each with the other side beside it: reserves, the
-- service's token prices, and `trade_price`, the side's token in units of the other at the pool's last trade.
CREATE OR REPLACE VIEW reports.pool_snapshot_sides AS
WITH s AS (
  SELECT chain_id, _taken_at AS time, id AS pool, 'base' AS side, base_token_id AS token, base_token_symbol AS symbol,
         base_reserve AS reserve, base_token_usd_price AS price_usd, quote_token_id AS other_token,
         quote_reserve AS other_reserve, quote_token_usd_price AS other_price_usd,
         CASE WHEN last_trade_price > 0 THEN last_trade_price END AS trade_price
  FROM list.liquidity
  UNION ALL
  SELECT chain_id, _taken_at, id, 'quote', quote_token_id, quote_token_symbol, quote_reserve, quote_token_usd_price,
         base_token_id, base_reserve, base_token_usd_price, CASE WHEN last_trade_price > 0 THEN 1 / last_trade_price END
  FROM list.liquidity
)
SELECT s.*, t.token IS NOT NULL AS trusted, o.token IS NOT NULL AS other_trusted
FROM s
LEFT JOIN reports.trusted_tokens t ON t.chain_id = s.chain_id AND t.token = s.token
LEFT JOIN reports.trusted_tokens o ON o.chain_id = s.chain_id AND o.token = s.other_token;

-- Every token of every snapshot with its tracked price and bound, by the rules of `token_prices_daily` (a snapshot's
-- derived price is the backing pool's last trade price, so nothing carries over between snapshots), and its tracked
-- value and share as in `token_value_daily`.
CREATE OR REPLACE VIEW reports.token_prices_snapshot AS
WITH sides AS MATERIALIZED (
  SELECT * FROM reports.pool_snapshot_sides
), backing AS (
  SELECT chain_id, time, token, pool, other_token AS via_token, other_reserve * other_price_usd AS backing_usd,
         trade_price * other_price_usd AS trade_price_usd
  FROM sides
  WHERE other_trusted AND NOT trusted
), derived AS (
  SELECT chain_id, time, token, pool, via_token, backing_usd, trade_price_usd
  FROM backing
  WHERE trade_price_usd > 0 AND backing_usd >= reports.min_tracked_liquidity_usd()
  QUALIFY row_number() OVER (PARTITION BY chain_id, time, token ORDER BY backing_usd DESC, pool) = 1
), bound AS (
  SELECT chain_id, time, token, sum(backing_usd) AS backing_usd FROM backing GROUP BY ALL
), tokens AS (
  SELECT chain_id, time, token, bool_or(trusted) AS trusted, sum(reserve) AS reserve, median(price_usd) AS upstream_price_usd,
         sum(reserve * price_usd) AS value_untracked_usd
  FROM sides GROUP BY ALL
), priced AS (
  SELECT t.chain_id, t.time, t.token, t.trusted, t.reserve, t.upstream_price_usd,
         CASE WHEN t.trusted THEN t.upstream_price_usd ELSE d.trade_price_usd END AS price_usd,
         d.pool AS via_pool, d.via_token, d.backing_usd AS via_backing_usd,
         CASE WHEN NOT t.trusted THEN coalesce(b.backing_usd, 0) END AS backing_usd, t.value_untracked_usd
  FROM tokens t
  LEFT JOIN derived d ON d.chain_id = t.chain_id AND d.time = t.time AND d.token = t.token
  LEFT JOIN bound b ON b.chain_id = t.chain_id AND b.time = t.time AND b.token = t.token
)
SELECT *,
       reports.token_tracked_value(trusted, reserve, price_usd, backing_usd, value_untracked_usd) AS value_usd,
       reports.token_tracked_share(trusted, reserve, price_usd, backing_usd) AS share
FROM priced;

-- Tracked and untracked TVL of every pool at every snapshot, by the rules of `pool_day_tracked`.
CREATE OR REPLACE VIEW reports.pool_snapshot_tracked AS
WITH s AS (
  SELECT s.*,
         reports.side_tracked_value(s.trusted, s.other_trusted, s.reserve, s.price_usd, v.price_usd, v.share) AS tracked_value
  FROM reports.pool_snapshot_sides s
  LEFT JOIN reports.token_prices_snapshot v ON v.chain_id = s.chain_id AND v.time = s.time AND v.token = s.token
), pool AS (
  SELECT chain_id, time, pool,
         any_value(trusted) FILTER (WHERE side = 'base') AS base_trusted, any_value(trusted) FILTER (WHERE side = 'quote') AS quote_trusted,
         sum(reserve * price_usd) FILTER (WHERE side = 'base') AS base_value, sum(reserve * price_usd) FILTER (WHERE side = 'quote') AS quote_value,
         sum(tracked_value) FILTER (WHERE side = 'base') AS base_tracked, sum(tracked_value) FILTER (WHERE side = 'quote') AS quote_tracked
  FROM s GROUP BY chain_id, time, pool
)
SELECT pool.*, base_tracked + quote_tracked AS tvl_usd, base_value + quote_value AS tvl_untracked_usd
FROM pool;
