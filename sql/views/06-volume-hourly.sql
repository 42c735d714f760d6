-- name: volume_hourly
-- answers: traded volume per pool per hour in base, quote and USD, from the hour data
-- grain: one row per pool, chain and UTC hour
CREATE OR REPLACE VIEW reports.volume_hourly AS
SELECT chain_id, CAST(to_timestamp(hour) AS DATE) AS day, to_timestamp(hour) AS time, pair_address AS pool,
       CAST(volume_base_text AS DOUBLE) AS volume_base, CAST(volume_quote_text AS DOUBLE) AS volume_quote, CAST(volume_usd_text AS DOUBLE) AS volume_usd,
       CAST(fee_base_text AS DOUBLE) AS fee_base, CAST(fee_quote_text AS DOUBLE) AS fee_quote, CAST(txns AS BIGINT) AS txns
FROM dodoex.pair_hour_datas;
