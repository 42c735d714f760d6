-- name: positions_by_user
-- answers: liquidity positions per user: pool, LP token balance (held and in mining), last change
-- grain: one row per user, pool and chain (current state)
CREATE OR REPLACE VIEW reports.positions_by_user AS
SELECT lp.chain_id, CAST(to_timestamp(CAST(lp.last_tx_time AS BIGINT)) AS DATE) AS day, lp.user_id AS "user", lp.pair_id AS pool, p.base_symbol, p.quote_symbol,
       lp.lp_token_id, lp.liquidity_token_balance_text AS balance, lp.liquidity_token_in_mining_text AS in_mining
FROM dodoex.liquidity_positions lp LEFT JOIN dodoex.pairs p ON p.chain_id = lp.chain_id AND p.id = lp.pair_id;
