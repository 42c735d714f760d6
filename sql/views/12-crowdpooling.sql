-- name: crowdpooling_daily
-- answers: crowdfunding pools per day: quote invested and cancelled (in quote token units), bids, new investors, with the pool's tokens
-- grain: one row per crowd pool, chain and UTC day
-- display: chain_id, day, crowd_pool, invested_quote, bids, new_investors
CREATE OR REPLACE VIEW reports.crowdpooling_daily AS
SELECT d.chain_id, CAST(to_timestamp(d.date) AS DATE) AS day, d.crowd_pooling_id AS crowd_pool, c.base_token_id, c.quote_token_id, c.creator,
       d.invested_quote, d.canceled_quote, d.invest_count AS bids, d.newcome AS new_investors
FROM dodoex.crowd_pooling_day_datas d LEFT JOIN dodoex.crowd_poolings c ON c.chain_id = d.chain_id AND c.id = d.crowd_pooling_id;
