-- name: volume_daily
-- answers: traded volume per pool per day in base, quote and USD (tracked, and the upstream's untracked figure), with fees, cross-checked against the sum of its swaps (swaps_match)
-- grain: one row per pool, chain and UTC day
-- display: chain_id, day, pool, volume_usd, fees_usd, txns, swaps_match
CREATE OR REPLACE VIEW reports.volume_daily AS
WITH sw AS (
  SELECT chain_id, CAST(to_timestamp("timestamp") AS DATE) AS day, pair_id AS pool,
         sum(base_volume) AS swaps_volume_base, sum(quote_volume) AS swaps_volume_quote, count(*) AS swaps
  FROM dodoex.swaps GROUP BY ALL
)
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.pair_address AS pool, d.base_token_id, d.quote_token_id,
       d.volume_base, d.volume_quote, t.volume_usd, d.volume_usd AS volume_untracked_usd, d.fee_base, d.fee_quote, t.fees_usd, d.txns,
       sw.swaps, sw.swaps_volume_base, sw.swaps_volume_quote,
       -- The day's volume is the sum of its swaps (up to DOUBLE rounding: one part in a billion).
       abs(d.volume_base - coalesce(sw.swaps_volume_base, 0)) <= 1e-9 * abs(d.volume_base) AS swaps_match
FROM dodoex.pair_day_datas d
JOIN reports.pool_day_tracked t ON t.chain_id = d.chain_id AND t.pool = d.pair_address AND t.day = CAST(to_timestamp(d.date) AS DATE)
LEFT JOIN sw ON sw.chain_id = d.chain_id AND sw.pool = d.pair_address AND sw.day = CAST(to_timestamp(d.date) AS DATE);
