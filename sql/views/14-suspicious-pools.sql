-- name: suspicious_pools
-- answers: pools in each chain's latest snapshot whose untracked or service TVL is more than 10 times the tracked TVL (and at least 10,000 USD): the untrusted token and price behind the difference
-- grain: one row per pool and chain (latest snapshot)
-- display: chain_id, day, pool, tvl_usd, tvl_untracked_usd, tvl_service_usd, suspect_symbol
CREATE OR REPLACE VIEW reports.suspicious_pools AS
WITH last AS (SELECT chain_id, max(_taken_at) AS time FROM list.liquidity GROUP BY chain_id),
t AS (
  SELECT t.*, l.type, l.tvl AS tvl_service_usd, greatest(t.tvl_untracked_usd, coalesce(l.tvl, 0)) AS claimed_usd
  FROM reports.pool_snapshot_tracked t
  JOIN last ON last.chain_id = t.chain_id AND last.time = t.time
  JOIN list.liquidity l ON l.chain_id = t.chain_id AND l._taken_at = t.time AND l.id = t.pool
), suspect AS (
  -- The untrusted side holding the most value: the token and price that inflate the pool.
  SELECT s.chain_id, s.time, s.pool, arg_max(s.token, s.reserve * s.price_usd) AS token, arg_max(s.symbol, s.reserve * s.price_usd) AS symbol,
         arg_max(s.price_usd, s.reserve * s.price_usd) AS price_usd, max(s.reserve * s.price_usd) AS value_usd
  FROM reports.pool_snapshot_sides s
  LEFT JOIN reports.trusted_tokens tt ON tt.chain_id = s.chain_id AND tt.token = s.token
  WHERE tt.token IS NULL
  GROUP BY ALL
)
SELECT t.chain_id, CAST(t.time AS DATE) AS day, t.pool, t.type AS pool_type, t.tvl_usd, t.tvl_untracked_usd, t.tvl_service_usd,
       CASE WHEN t.tvl_usd > 0 THEN t.claimed_usd / t.tvl_usd END AS times_tracked,
       suspect.token AS suspect_token, suspect.symbol AS suspect_symbol, suspect.price_usd AS suspect_price_usd, suspect.value_usd AS suspect_value_usd
FROM t LEFT JOIN suspect ON suspect.chain_id = t.chain_id AND suspect.time = t.time AND suspect.pool = t.pool
WHERE t.claimed_usd >= 10000 AND t.claimed_usd > 10 * t.tvl_usd;
