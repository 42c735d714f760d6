-- name: tvl_by_token
-- answers: value locked per token per day, summed over the pools that hold it (reserve times the token's USD price)
-- grain: one row per token, chain and UTC day
CREATE OR REPLACE VIEW reports.tvl_by_token AS
SELECT chain_id, day, token, any_value(symbol) AS symbol, sum(reserve) AS reserve, sum(value_usd) AS tvl_usd
FROM (
  SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.base_token_id AS token, t.symbol,
         CAST(d.base_token_reserve_text AS DOUBLE) AS reserve, CAST(d.base_token_reserve_text AS DOUBLE) * CAST(d.base_usd_price_text AS DOUBLE) AS value_usd
  FROM dodoex.pair_day_datas d LEFT JOIN dodoex.tokens t ON t.chain_id = d.chain_id AND t.id = d.base_token_id
  UNION ALL
  SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE), d.quote_token_id, t.symbol,
         CAST(d.quote_token_reserve_text AS DOUBLE), CAST(d.quote_token_reserve_text AS DOUBLE) * CAST(d.quote_usd_price_text AS DOUBLE)
  FROM dodoex.pair_day_datas d LEFT JOIN dodoex.tokens t ON t.chain_id = d.chain_id AND t.id = d.quote_token_id
)
GROUP BY chain_id, day, token;
