-- name: positions_by_user
-- answers: liquidity positions per user: pool, LP token balance (held and in mining), last change
-- grain: one row per user, pool and chain (current state)
-- display: chain_id, user, base_symbol, quote_symbol, balance, in_mining, pool
CREATE OR REPLACE VIEW reports.positions_by_user AS
SELECT lp.chain_id, CAST(to_timestamp(lp.last_tx_time) AS DATE) AS day, lp.user_id AS "user", lp.pair_id AS pool, p.base_symbol, p.quote_symbol,
       lp.lp_token_id, lp.liquidity_token_balance AS balance, lp.liquidity_token_in_mining AS in_mining,
       lp._exact.liquidity_token_balance AS balance_text, lp._exact.liquidity_token_in_mining AS in_mining_text
FROM dodoex.liquidity_positions lp LEFT JOIN dodoex.pairs p ON p.chain_id = lp.chain_id AND p.id = lp.pair_id;
