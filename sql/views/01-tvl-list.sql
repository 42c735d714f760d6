-- name: tvl_list
-- answers: TVL (USD) of every pool at each liquidity-list snapshot: tracked (trusted prices only), untracked (every price), and the service's own figure beside them
-- grain: one row per pool, chain and snapshot (time series)
-- display: chain_id, day, base_token_symbol, quote_token_symbol, tvl_usd, tvl_service_usd, pool_type, pool
CREATE OR REPLACE VIEW reports.tvl_list AS
SELECT l.chain_id, CAST(l._taken_at AS DATE) AS day, l._taken_at AS time, l.id AS pool, l.type AS pool_type,
       l.base_token_symbol, l.quote_token_symbol, t.tvl_usd, t.tvl_untracked_usd, l.tvl AS tvl_service_usd, l._exact.tvl AS tvl_service_text
FROM list.liquidity l
JOIN reports.pool_snapshot_tracked t ON t.chain_id = l.chain_id AND t.time = l._taken_at AND t.pool = l.id;
