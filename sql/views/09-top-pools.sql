-- name: top_pools
-- answers: pools ranked by tracked TVL in each chain's latest liquidity-list snapshot, with the untracked and the service's TVL beside it, and the service's APY
-- grain: one row per pool and chain (latest snapshot)
-- display: chain_id, rank, base_token_symbol, quote_token_symbol, tvl_usd, tvl_service_usd, transaction_base_apy, pool_type, pool
CREATE OR REPLACE VIEW reports.top_pools AS
WITH last AS (SELECT chain_id, max(_taken_at) AS time FROM list.liquidity GROUP BY chain_id)
SELECT l.chain_id, CAST(l._taken_at AS DATE) AS day, row_number() OVER (PARTITION BY l.chain_id ORDER BY t.tvl_usd DESC NULLS LAST, l.id) AS rank,
       l.id AS pool, l.type AS pool_type, l.base_token_symbol, l.quote_token_symbol, t.tvl_usd, t.tvl_untracked_usd, l.tvl AS tvl_service_usd,
       l.transaction_base_apy, l.mining_base_apy
FROM list.liquidity l
JOIN last ON l.chain_id = last.chain_id AND l._taken_at = last.time
JOIN reports.pool_snapshot_tracked t ON t.chain_id = l.chain_id AND t.time = l._taken_at AND t.pool = l.id;
