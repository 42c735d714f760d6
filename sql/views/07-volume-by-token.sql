-- name: volume_by_token
-- answers: traded volume per token per day, in token units and USD, from the token day data
-- grain: one row per token, chain and UTC day
CREATE OR REPLACE VIEW reports.volume_by_token AS
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.token_id AS token, t.symbol,
       CAST(d.volume_text AS DOUBLE) AS volume, CAST(d.volume_usd_text AS DOUBLE) AS volume_usd, CAST(d.fee_text AS DOUBLE) AS fee, CAST(d.txns AS BIGINT) AS txns
FROM dodoex.token_day_datas d LEFT JOIN dodoex.tokens t ON t.chain_id = d.chain_id AND t.id = d.token_id;
