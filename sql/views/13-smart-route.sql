-- name: smart_route_volume
-- answers: smart-route (aggregator) trades per day: orders, traders, USD volume tracked (valued by the sold token's price when it counts, else the bought token's) and the upstream's untracked figure
-- grain: one row per chain and UTC day
CREATE OR REPLACE VIEW reports.smart_route_volume AS
WITH o AS (
  SELECT o.*, CAST(to_timestamp(o."timestamp") AS DATE) AS day FROM dodoex.order_histories o WHERE o.source = 'SMART_ROUTE'
)
SELECT o.chain_id, o.day, count(*) AS orders, count(DISTINCT o."from") AS traders,
       sum(CASE WHEN f.token IS NOT NULL THEN o.amount_in * f.price_usd WHEN t.token IS NOT NULL THEN o.amount_out * t.price_usd ELSE 0 END) AS volume_usd,
       sum(o.volume_usd) AS volume_untracked_usd
FROM o
LEFT JOIN reports.priced_tokens_daily f ON f.chain_id = o.chain_id AND f.day = o.day AND f.token = o.from_token_id
LEFT JOIN reports.priced_tokens_daily t ON t.chain_id = o.chain_id AND t.day = o.day AND t.token = o.to_token_id
GROUP BY o.chain_id, o.day;
