-- Plausible APY: the rule that flags an APY (a fraction a year: 0.05 = 5%) as implausible, in one place for the `apy`
-- report and the dashboard. Above 10 (1,000% a year), or below 0: a pool whose fees or the service's figure give that
-- is either new with a TVL near zero, or wash-traded, or the service's own arithmetic on a token with a made-up price
-- (a two-chain export showed the service's APY of WBNB/DUST at 5,205,723,408,104,688,000%). The figure is kept as it
-- came; the flag says it is not to be read as a return.
CREATE OR REPLACE MACRO reports.max_plausible_apy() AS CAST(10 AS DOUBLE);
CREATE OR REPLACE MACRO reports.implausible_apy(x) AS (x > reports.max_plausible_apy() OR x < 0);
