-- name: tvl_by_chain_type
-- answers: total service TVL per chain and pool type, from each day's last liquidity-list snapshot
-- grain: one row per chain, pool type and UTC day
CREATE OR REPLACE VIEW reports.tvl_by_chain_type AS
WITH last AS (
  SELECT chain_id, CAST(_taken_at AS DATE) AS day, max(_taken_at) AS time FROM list.liquidity GROUP BY ALL
)
SELECT l.chain_id, last.day, l.type AS pool_type, count(*) AS pools, sum(CAST(l.tvl_text AS DOUBLE)) AS tvl_usd
FROM list.liquidity l JOIN last ON l.chain_id = last.chain_id AND l._taken_at = last.time
GROUP BY ALL;
