-- name: volume_daily
-- answers: traded volume per pool per day in base, quote and USD from the day data, cross-checked against the sum of its swaps
-- grain: one row per pool, chain and UTC day
CREATE OR REPLACE VIEW reports.volume_daily AS
WITH sw AS (
  SELECT chain_id, CAST(to_timestamp(CAST("timestamp" AS BIGINT)) AS DATE) AS day, pair_id AS pool,
         sum(CAST(base_volume_text AS DOUBLE)) AS swaps_volume_base, sum(CAST(quote_volume_text AS DOUBLE)) AS swaps_volume_quote,
         sum(CAST(volume_usd_text AS DOUBLE)) AS swaps_volume_usd, count(*) AS swaps
  FROM dodoex.swaps GROUP BY ALL
)
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.pair_address AS pool, d.base_token_id, d.quote_token_id,
       CAST(d.volume_base_text AS DOUBLE) AS volume_base, CAST(d.volume_quote_text AS DOUBLE) AS volume_quote, CAST(d.volume_usd_text AS DOUBLE) AS volume_usd,
       CAST(d.fee_base_text AS DOUBLE) AS fee_base, CAST(d.fee_quote_text AS DOUBLE) AS fee_quote, CAST(d.txns AS BIGINT) AS txns,
       sw.swaps, sw.swaps_volume_base, sw.swaps_volume_quote, sw.swaps_volume_usd,
       CAST(d.volume_base_text AS DOUBLE) - coalesce(sw.swaps_volume_base, 0) AS volume_base_minus_swaps
FROM dodoex.pair_day_datas d
LEFT JOIN sw ON sw.chain_id = d.chain_id AND sw.pool = d.pair_address AND sw.day = CAST(to_timestamp(d.date) AS DATE);
