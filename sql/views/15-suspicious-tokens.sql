-- name: suspicious_tokens
-- answers: untrusted tokens whose upstream USD price is over 10 times above or below the price derived from the pool that backs them, per day: both prices, their ratio, and that pool, its trusted token and the trusted value in it
-- grain: one row per token, chain and UTC day (days with a derived price that far from the upstream one)
-- display: chain_id, day, symbol, upstream_price_usd, derived_price_usd, times_derived, token
CREATE OR REPLACE VIEW reports.suspicious_tokens AS
SELECT p.chain_id, p.day, p.token, t.symbol, p.upstream_price_usd, p.price_usd AS derived_price_usd,
       p.upstream_price_usd / p.price_usd AS times_derived, p.price_source, p.price_day, p.via_pool, p.via_token,
       v.symbol AS via_symbol, p.via_backing_usd, p.reserve, p.backing_usd
FROM reports.token_prices_daily p
LEFT JOIN dodoex.tokens t ON t.chain_id = p.chain_id AND t.id = p.token
LEFT JOIN dodoex.tokens v ON v.chain_id = p.chain_id AND v.id = p.via_token
WHERE NOT p.trusted AND p.price_usd > 0 AND (p.upstream_price_usd > 10 * p.price_usd OR 10 * p.upstream_price_usd < p.price_usd);
