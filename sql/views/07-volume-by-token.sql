-- name: volume_by_token
-- answers: traded volume per token per day, in token units and USD: tracked (only when the token's price counts that day) and the upstream's untracked figure
-- grain: one row per token, chain and UTC day
CREATE OR REPLACE VIEW reports.volume_by_token AS
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.token_id AS token, t.symbol, d.volume,
       CASE WHEN p.token IS NOT NULL THEN d.volume * d.usd_price ELSE 0 END AS volume_usd, d.volume_usd AS volume_untracked_usd, d.fee, d.txns
FROM dodoex.token_day_datas d
LEFT JOIN reports.priced_tokens_daily p ON p.chain_id = d.chain_id AND p.day = CAST(to_timestamp(d.date) AS DATE) AND p.token = d.token_id
LEFT JOIN dodoex.tokens t ON t.chain_id = d.chain_id AND t.id = d.token_id;
