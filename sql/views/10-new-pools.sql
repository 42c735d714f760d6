-- name: new_pools
-- answers: pools in the order they were created, with type, tokens and creator
-- grain: one row per pool and chain
-- display: chain_id, time, base_symbol, quote_symbol, pool_type, pool
CREATE OR REPLACE VIEW reports.new_pools AS
SELECT chain_id, CAST(to_timestamp(created_at_timestamp) AS DATE) AS day, to_timestamp(created_at_timestamp) AS time,
       id AS pool, type AS pool_type, base_symbol, quote_symbol, creator, created_at_block_number AS block
FROM dodoex.pairs WHERE type <> 'VIRTUAL';
