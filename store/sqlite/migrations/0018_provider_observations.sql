-- Version 18 keeps what the platform observed of each music provider, and
-- corrects provider cost reconciliations that presented a price as a
-- reading.
--
-- provider_observations holds the newest outcome of a call to a provider
-- route in one environment (a dispatch or a poll of any workspace's
-- operation): available when the provider answered, unreachable when it
-- did not. GET /api/v1/providers reports it with its time; a provider no
-- call has reached is configured, never available.
CREATE TABLE provider_observations (
	provider TEXT NOT NULL,
	environment TEXT NOT NULL CHECK (environment IN ('test', 'live')),
	reach TEXT NOT NULL CHECK (reach IN ('available', 'unreachable')),
	code TEXT NOT NULL,
	observed_at TIMESTAMP NOT NULL,
	PRIMARY KEY (provider, environment)
);

-- Reconciliations of tasks whose provider reported no consumption copied
-- the expected price into the actual charge and said MATCHED (source
-- price_table). Nothing was observed: the charge is unknown, and only the
-- expected price stays.
UPDATE generation_costs SET status = 'UNKNOWN', source = 'none', actual = NULL, drift_bps = 0
	WHERE source = 'price_table';
