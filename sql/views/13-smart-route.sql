-- name: smart_route_volume
-- answers: smart-route (aggregator) trades per day: orders, traders, USD volume tracked (by the sold token when it is trusted, else the bought one; else by the sold or bought token's derived price, at most the trusted volume of the pools that back that token that day) and the upstream's untracked figure
-- grain: one row per chain and UTC day
-- display: chain_id, day, orders, traders, volume_usd
CREATE OR REPLACE VIEW reports.smart_route_volume AS
WITH o AS (
  SELECT o.*, CAST(to_timestamp(o."timestamp") AS DATE) AS day FROM dodoex.order_histories o WHERE o.source = 'SMART_ROUTE'
), valued AS (
  -- Each order's value and the token whose price gives it: a trusted side first, then a derived price.
  SELECT o.chain_id, o.day,
         CASE WHEN f.trusted THEN 'from' WHEN t.trusted THEN 'to' WHEN f.price_usd IS NOT NULL THEN 'from' WHEN t.price_usd IS NOT NULL THEN 'to' END AS priced_by,
         CASE priced_by WHEN 'from' THEN o.from_token_id WHEN 'to' THEN o.to_token_id END AS token,
         CASE priced_by WHEN 'from' THEN o.amount_in * f.price_usd WHEN 'to' THEN o.amount_out * t.price_usd ELSE 0 END AS value_usd,
         CASE priced_by WHEN 'from' THEN f.backing_volume_usd WHEN 'to' THEN t.backing_volume_usd END AS bound_usd
  FROM o
  LEFT JOIN reports.token_prices_daily f ON f.chain_id = o.chain_id AND f.day = o.day AND f.token = o.from_token_id
  LEFT JOIN reports.token_prices_daily t ON t.chain_id = o.chain_id AND t.day = o.day AND t.token = o.to_token_id
), tracked AS (
  -- Orders valued by a derived price count at most the trusted volume behind that token that day (null for trusted).
  SELECT chain_id, day, sum(v) AS volume_usd
  FROM (SELECT chain_id, day, least(sum(value_usd), coalesce(any_value(bound_usd), CAST('Infinity' AS DOUBLE))) AS v FROM valued GROUP BY chain_id, day, token)
  GROUP BY ALL
)
SELECT o.chain_id, o.day, count(*) AS orders, count(DISTINCT o."from") AS traders, any_value(tr.volume_usd) AS volume_usd,
       sum(o.volume_usd) AS volume_untracked_usd
FROM o LEFT JOIN tracked tr ON tr.chain_id = o.chain_id AND tr.day = o.day
GROUP BY o.chain_id, o.day;
