-- name: tvl_by_chain_type
-- answers: total TVL per chain and pool type from each day's last liquidity-list snapshot: tracked (the total to use) and untracked
-- grain: one row per chain, pool type and UTC day
-- display: chain_id, day, pool_type, pools, tvl_usd, tvl_untracked_usd
CREATE OR REPLACE VIEW reports.tvl_by_chain_type AS
WITH last AS (
  SELECT chain_id, CAST(_taken_at AS DATE) AS day, max(_taken_at) AS time FROM list.liquidity GROUP BY ALL
)
SELECT l.chain_id, last.day, l.type AS pool_type, count(*) AS pools, sum(t.tvl_usd) AS tvl_usd, sum(t.tvl_untracked_usd) AS tvl_untracked_usd
FROM list.liquidity l
JOIN last ON l.chain_id = last.chain_id AND l._taken_at = last.time
JOIN reports.pool_snapshot_tracked t ON t.chain_id = l.chain_id AND t.time = l._taken_at AND t.pool = l.id
GROUP BY ALL;
