-- name: tvl_list
-- answers: the service's TVL (USD) of every pool at each liquidity-list snapshot
-- grain: one row per pool, chain and snapshot (time series)
CREATE OR REPLACE VIEW reports.tvl_list AS
SELECT chain_id, CAST(_taken_at AS DATE) AS day, _taken_at AS time, id AS pool, type AS pool_type,
       base_token_symbol, quote_token_symbol, CAST(tvl_text AS DOUBLE) AS tvl_usd, tvl_text
FROM list.liquidity;
