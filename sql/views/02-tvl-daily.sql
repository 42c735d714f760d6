-- name: tvl_daily
-- answers: TVL of every pool per day from subgraph reserves times token USD prices, beside the service's TVL and their difference
-- grain: one row per pool, chain and UTC day (days with pool activity)
CREATE OR REPLACE VIEW reports.tvl_daily AS
WITH sub AS (
  SELECT chain_id, CAST(to_timestamp(date) AS DATE) AS day, pair_address AS pool,
         CAST(base_token_reserve_text AS DOUBLE) * CAST(base_usd_price_text AS DOUBLE)
       + CAST(quote_token_reserve_text AS DOUBLE) * CAST(quote_usd_price_text AS DOUBLE) AS tvl_reserves_usd
  FROM dodoex.pair_day_datas
), svc AS (
  SELECT chain_id, CAST(_taken_at AS DATE) AS day, id AS pool, arg_max(CAST(tvl_text AS DOUBLE), _taken_at) AS tvl_service_usd
  FROM list.liquidity GROUP BY ALL
)
SELECT sub.chain_id, sub.day, sub.pool, p.type AS pool_type, sub.tvl_reserves_usd, svc.tvl_service_usd,
       svc.tvl_service_usd - sub.tvl_reserves_usd AS difference_usd
FROM sub
LEFT JOIN svc USING (chain_id, day, pool)
LEFT JOIN dodoex.pairs p ON p.chain_id = sub.chain_id AND p.id = sub.pool;
