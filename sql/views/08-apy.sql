-- name: apy
-- answers: per pool and day, the service's transaction and mining APY (fractions: 0.05 = 5%) beside an APY from the day's tracked fees over tracked TVL, annualized (x365); `implausible` names those above 10 (1,000% a year) or below 0 (sql/helpers/02-plausible-apy.sql)
-- grain: one row per pool, chain and UTC day with pool activity
-- display: chain_id, day, pool, fee_apy, transaction_base_apy, mining_base_apy, tvl_usd, implausible
CREATE OR REPLACE VIEW reports.apy AS
WITH svc AS (
  SELECT chain_id, CAST(_taken_at AS DATE) AS day, id AS pool,
         arg_max(transaction_base_apy, _taken_at) AS transaction_base_apy, arg_max(transaction_quote_apy, _taken_at) AS transaction_quote_apy,
         arg_max(mining_base_apy, _taken_at) AS mining_base_apy, arg_max(mining_quote_apy, _taken_at) AS mining_quote_apy
  FROM list.liquidity GROUP BY ALL
)
SELECT *,
       nullif(concat_ws(', ',
         CASE WHEN reports.implausible_apy(fee_apy) THEN 'fee_apy' END,
         CASE WHEN reports.implausible_apy(transaction_base_apy) THEN 'transaction_base_apy' END,
         CASE WHEN reports.implausible_apy(transaction_quote_apy) THEN 'transaction_quote_apy' END,
         CASE WHEN reports.implausible_apy(mining_base_apy) THEN 'mining_base_apy' END,
         CASE WHEN reports.implausible_apy(mining_quote_apy) THEN 'mining_quote_apy' END), '') AS implausible
FROM (
  SELECT t.chain_id, t.day, t.pool, t.fees_usd, t.tvl_usd,
         CASE WHEN t.tvl_usd > 0 THEN t.fees_usd / t.tvl_usd * 365 END AS fee_apy,
         svc.transaction_base_apy, svc.transaction_quote_apy, svc.mining_base_apy, svc.mining_quote_apy
  FROM reports.pool_day_tracked t LEFT JOIN svc USING (chain_id, day, pool)
);
