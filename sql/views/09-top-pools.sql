-- name: top_pools
-- answers: pools ranked by the service's TVL in each chain's latest liquidity-list snapshot, with their APY
-- grain: one row per pool and chain (latest snapshot)
CREATE OR REPLACE VIEW reports.top_pools AS
WITH last AS (SELECT chain_id, max(_taken_at) AS time FROM list.liquidity GROUP BY chain_id)
SELECT l.chain_id, CAST(l._taken_at AS DATE) AS day, row_number() OVER (PARTITION BY l.chain_id ORDER BY CAST(l.tvl_text AS DOUBLE) DESC NULLS LAST, l.id) AS rank,
       l.id AS pool, l.type AS pool_type, l.base_token_symbol, l.quote_token_symbol, CAST(l.tvl_text AS DOUBLE) AS tvl_usd,
       CAST(l.transaction_base_apy_text AS DOUBLE) AS transaction_base_apy, CAST(l.mining_base_apy_text AS DOUBLE) AS mining_base_apy
FROM list.liquidity l JOIN last ON l.chain_id = last.chain_id AND l._taken_at = last.time;
