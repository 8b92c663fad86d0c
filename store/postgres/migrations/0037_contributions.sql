-- A creator's contributions: the submissions of one submitter that were
-- ACCEPTED, in one environment, newest first, read across tenants by the
-- creator read model (its list and the profile's count). Queries name
-- status = 'ACCEPTED' literally, so both databases use the partial index;
-- whether the project is public is checked per row against its primary
-- key.

CREATE INDEX submissions_accepted_submitter ON submissions (submitter_user_id, environment, id) WHERE status = 'ACCEPTED';
