-- name: volume_by_token
-- answers: traded volume per token per day, in token units and USD: tracked (a trusted token at its upstream price; another at its derived price, at most the trusted volume of the pools that back it) and the upstream's untracked figure
-- grain: one row per token, chain and UTC day
-- display: chain_id, day, symbol, volume_usd, txns, price_usd, token
CREATE OR REPLACE VIEW reports.volume_by_token AS
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.token_id AS token, t.symbol, d.volume,
       CASE WHEN tt.token IS NOT NULL THEN d.volume * d.usd_price WHEN p.price_usd IS NOT NULL THEN least(d.volume * p.price_usd, p.backing_volume_usd)
            ELSE 0 END AS volume_usd,
       d.volume_usd AS volume_untracked_usd, d.fee, d.txns, CASE WHEN tt.token IS NOT NULL THEN d.usd_price ELSE p.price_usd END AS price_usd,
       d.usd_price AS upstream_price_usd
FROM dodoex.token_day_datas d
LEFT JOIN reports.trusted_tokens tt ON tt.chain_id = d.chain_id AND tt.token = d.token_id
LEFT JOIN reports.token_prices_daily p ON p.chain_id = d.chain_id AND p.day = CAST(to_timestamp(d.date) AS DATE) AND p.token = d.token_id
LEFT JOIN dodoex.tokens t ON t.chain_id = d.chain_id AND t.id = d.token_id;
