-- name: crowdpooling_daily
-- answers: crowdfunding pools per day: quote invested and cancelled, bids, new investors, with the pool's tokens
-- grain: one row per crowd pool, chain and UTC day
CREATE OR REPLACE VIEW reports.crowdpooling_daily AS
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.crowd_pooling_id AS crowd_pool, c.base_token_id, c.quote_token_id, c.creator,
       CAST(d.invested_quote_text AS DOUBLE) AS invested_quote, CAST(d.canceled_quote_text AS DOUBLE) AS canceled_quote,
       CAST(d.invest_count AS BIGINT) AS bids, CAST(d.newcome AS BIGINT) AS new_investors
FROM dodoex.crowd_pooling_day_datas d LEFT JOIN dodoex.crowd_poolings c ON c.chain_id = d.chain_id AND c.id = d.crowd_pooling_id;
