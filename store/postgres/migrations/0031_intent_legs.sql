-- Legs of transaction intents (the chain/intent domain): an intent whose
-- purpose prices several recipients pays each with its own transfer in
-- one transaction (a sale split into the seller's payout and the platform
-- fee).
--
-- The intent's body (transaction_intents.body, 0014) stays the whole
-- intent and what a read returns; it carries the legs under "legs", and
-- intents without legs (one payment to the treasury) have none there and
-- no rows here. transaction_intent_legs copies each leg's facts, written
-- once with the intent and never updated, so that the database keeps a
-- leg's role and recipient unique within its intent and can find the
-- payments to one recipient wallet (transaction_intent_legs_recipient).
-- leg_index is the leg's position in the intent's transfers, from 0.
-- Amounts are atomic integers, NUMERIC(20,0) (a u64 has up to 20
-- digits); gross = fee + net, as the domain froze them.
CREATE TABLE transaction_intent_legs (
	intent_id TEXT NOT NULL REFERENCES transaction_intents (id),
	leg_index INTEGER NOT NULL CHECK (leg_index >= 0),
	role TEXT NOT NULL CHECK (role <> ''),
	recipient TEXT NOT NULL,
	destination TEXT NOT NULL,
	gross_atomic NUMERIC(20,0) NOT NULL CHECK (gross_atomic >= 0),
	fee_atomic NUMERIC(20,0) NOT NULL CHECK (fee_atomic >= 0),
	net_atomic NUMERIC(20,0) NOT NULL CHECK (net_atomic >= 0),
	PRIMARY KEY (intent_id, leg_index),
	UNIQUE (intent_id, role),
	UNIQUE (intent_id, recipient)
);
CREATE INDEX transaction_intent_legs_recipient ON transaction_intent_legs (recipient, intent_id);
