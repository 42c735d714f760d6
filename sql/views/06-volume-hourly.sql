-- name: volume_hourly
-- answers: traded volume per pool per hour in base, quote and USD (tracked through trusted sides, and the upstream's untracked figure)
-- grain: one row per pool, chain and UTC hour
-- display: chain_id, time, pool, volume_usd, txns
CREATE OR REPLACE VIEW reports.volume_hourly AS
WITH h AS (
  SELECT h.*, b.token IS NOT NULL AS base_trusted, q.token IS NOT NULL AS quote_trusted
  FROM dodoex.pair_hour_datas h
  LEFT JOIN reports.trusted_tokens b ON b.chain_id = h.chain_id AND b.token = h.base_token_id
  LEFT JOIN reports.trusted_tokens q ON q.chain_id = h.chain_id AND q.token = h.quote_token_id
)
SELECT chain_id, CAST(to_timestamp(hour) AS DATE) AS day, to_timestamp(hour) AS time, pair_address AS pool, volume_base, volume_quote,
       CASE WHEN base_trusted AND quote_trusted THEN (volume_base * base_usd_price + volume_quote * quote_usd_price) / 2
            WHEN base_trusted THEN volume_base * base_usd_price WHEN quote_trusted THEN volume_quote * quote_usd_price ELSE 0 END AS volume_usd,
       volume_usd AS volume_untracked_usd, fee_base, fee_quote, txns
FROM h;
