-- name: tvl_daily
-- answers: TVL of every pool per day from subgraph reserves times token USD prices, tracked and untracked, beside the service's TVL of the day's last snapshot and the difference
-- grain: one row per pool, chain and UTC day (days with pool activity)
-- display: chain_id, day, pool, tvl_usd, tvl_service_usd, difference_usd
CREATE OR REPLACE VIEW reports.tvl_daily AS
WITH svc AS (
  SELECT chain_id, CAST(_taken_at AS DATE) AS day, id AS pool, arg_max(tvl, _taken_at) AS tvl_service_usd
  FROM list.liquidity GROUP BY ALL
)
SELECT d.chain_id, d.day, d.pool, p.type AS pool_type, d.tvl_usd, d.tvl_untracked_usd, svc.tvl_service_usd,
       svc.tvl_service_usd - d.tvl_usd AS difference_usd
FROM reports.pool_day_tracked d
LEFT JOIN svc USING (chain_id, day, pool)
LEFT JOIN dodoex.pairs p ON p.chain_id = d.chain_id AND p.id = d.pool;
