-- An environment's newest funding evidence is the reward treasury's
-- newest reading (GET /api/v1/features reports reward payouts verified
-- from it); without this index the read scans every challenge of the
-- environment.
CREATE INDEX challenges_evidence ON challenges (environment, funding_checked_at, id);
