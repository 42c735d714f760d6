-- name: tvl_by_token
-- answers: value locked per token per day, summed over the pools that hold it (reserve times the token's USD price); tracked only when the token's price counts that day
-- grain: one row per token, chain and UTC day
CREATE OR REPLACE VIEW reports.tvl_by_token AS
SELECT s.chain_id, s.day, s.token, any_value(t.symbol) AS symbol, sum(s.reserve) AS reserve,
       CASE WHEN any_value(p.token) IS NOT NULL THEN sum(s.reserve * s.price_usd) ELSE 0 END AS tvl_usd,
       sum(s.reserve * s.price_usd) AS tvl_untracked_usd
FROM reports.pool_day_sides s
LEFT JOIN reports.priced_tokens_daily p ON p.chain_id = s.chain_id AND p.day = s.day AND p.token = s.token
LEFT JOIN dodoex.tokens t ON t.chain_id = s.chain_id AND t.id = s.token
GROUP BY s.chain_id, s.day, s.token;
