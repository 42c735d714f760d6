-- name: apy
-- answers: per pool and day, the service's transaction and mining APY (fractions: 0.05 = 5%) beside an APY derived from the day's fees over TVL, annualized (x365)
-- grain: one row per pool, chain and UTC day with pool activity
CREATE OR REPLACE VIEW reports.apy AS
WITH fees AS (
  SELECT chain_id, CAST(to_timestamp(date) AS DATE) AS day, pair_address AS pool,
         CAST(fee_base_text AS DOUBLE) * CAST(base_usd_price_text AS DOUBLE) + CAST(fee_quote_text AS DOUBLE) * CAST(quote_usd_price_text AS DOUBLE) AS fees_usd,
         CAST(base_token_reserve_text AS DOUBLE) * CAST(base_usd_price_text AS DOUBLE) + CAST(quote_token_reserve_text AS DOUBLE) * CAST(quote_usd_price_text AS DOUBLE) AS tvl_usd
  FROM dodoex.pair_day_datas
), svc AS (
  SELECT chain_id, CAST(_taken_at AS DATE) AS day, id AS pool,
         arg_max(CAST(transaction_base_apy_text AS DOUBLE), _taken_at) AS transaction_base_apy,
         arg_max(CAST(transaction_quote_apy_text AS DOUBLE), _taken_at) AS transaction_quote_apy,
         arg_max(CAST(mining_base_apy_text AS DOUBLE), _taken_at) AS mining_base_apy,
         arg_max(CAST(mining_quote_apy_text AS DOUBLE), _taken_at) AS mining_quote_apy
  FROM list.liquidity GROUP BY ALL
)
SELECT fees.chain_id, fees.day, fees.pool, fees.fees_usd, fees.tvl_usd,
       CASE WHEN fees.tvl_usd > 0 THEN fees.fees_usd / fees.tvl_usd * 365 END AS fee_apy,
       svc.transaction_base_apy, svc.transaction_quote_apy, svc.mining_base_apy, svc.mining_quote_apy
FROM fees LEFT JOIN svc USING (chain_id, day, pool);
