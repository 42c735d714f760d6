-- name: smart_route_volume
-- answers: smart-route (aggregator) trades per day: orders, traders, USD volume
-- grain: one row per chain and UTC day
CREATE OR REPLACE VIEW reports.smart_route_volume AS
SELECT chain_id, CAST(to_timestamp(CAST("timestamp" AS BIGINT)) AS DATE) AS day, count(*) AS orders, count(DISTINCT "from") AS traders,
       sum(CAST(volume_usd_text AS DOUBLE)) AS volume_usd
FROM dodoex.order_histories WHERE source = 'SMART_ROUTE' GROUP BY ALL;
