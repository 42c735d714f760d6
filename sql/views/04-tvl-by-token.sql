-- name: tvl_by_token
-- answers: value locked per token per day over the pools that hold it: tracked (a trusted token at its upstream price; another at the price derived from the pool that backs it, at most its trusted backing) and untracked (every pool's upstream price)
-- grain: one row per token, chain and UTC day
-- display: chain_id, day, symbol, tvl_usd, price_usd, price_source, reserve, token
CREATE OR REPLACE VIEW reports.tvl_by_token AS
SELECT v.chain_id, v.day, v.token, t.symbol, v.reserve, v.value_usd AS tvl_usd, v.value_untracked_usd AS tvl_untracked_usd,
       v.price_usd, v.upstream_price_usd, v.price_source, v.backing_usd
FROM reports.token_value_daily v
LEFT JOIN dodoex.tokens t ON t.chain_id = v.chain_id AND t.id = v.token;
