-- Spread balances. Every reservation of a workspace debits its credit
-- balance and credits its reserved balance; held in one row each, those two
-- rows were locked by every accept of the workspace from its UPDATE to its
-- COMMIT, so the workspace's accepts ran one at a time. An account the
-- ledger spreads (ledger.Spread: workspace:credits and workspace:reserved)
-- now keeps its balance in its ledger_accounts row (the main part) and in
-- the rows of ledger_account_slots, and its balance is their sum, read in
-- one statement (store.LedgerAccountGet).
--
-- Each slot has a balance and a room, both never negative; a debit takes
-- from a slot's balance and adds to its room, a credit does the reverse,
-- so a slot's balance plus its room (its capacity) never changes but for
-- a rebalance. The capacities and the main row's balance sum to at most
-- 2^127 - 1: the whole balance never passes the ledger's 128-bit bound
-- although no change reads the other slots. A change goes to one slot that
-- can take it and that no other transaction holds (SKIP LOCKED), and waits
-- for nothing; when every slot that could take it is held, it waits for
-- one of them, and takes it if it still can. Otherwise it rebalances: it locks the main row, then
-- every slot in slot order, merges their balances, applies the change to
-- the sum under the ledger's rule (never below zero, never past 2^127 - 1:
-- ledger_refuse), and spreads the result evenly over the slots again (and,
-- for workspace:reserved, the room left below the bound too). So a change
-- is refused only when the whole balance does not cover it, and the slots
-- are refilled from the whole balance whenever they run dry.
--
-- A rebalance waits for the slots other transactions hold, and those never
-- wait for it on the same account: a change waits (for one slot, or for a
-- rebalance) only while it holds no slot of the account, each unit of work
-- changes a spread account once, and units take accounts in name order
-- (ledger.SettleAndRelease).
-- Existing balances stay in the main rows; the first rebalance spreads them.
CREATE TABLE ledger_account_slots (
	tenant_id TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	environment TEXT NOT NULL,
	ledger TEXT NOT NULL,
	name TEXT NOT NULL,
	slot INTEGER NOT NULL,
	balance NUMERIC(39,0) NOT NULL CHECK (balance >= 0),
	room NUMERIC(39,0) NOT NULL CHECK (room >= 0),
	version BIGINT NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (tenant_id, workspace_id, environment, ledger, name, slot),
	FOREIGN KEY (tenant_id, workspace_id, environment, ledger, name)
		REFERENCES ledger_accounts (tenant_id, workspace_id, environment, ledger, name)
);

-- ledger_spread_change applies delta to a spread account that may not go
-- negative, as above, over at least slots slots, trying them from slot
-- start on; room says whether a rebalance spreads the room too. It opens
-- the account (balance zero, no slots) when it does not exist. It raises
-- through ledger_refuse: LR002 for other decimals than the account's,
-- LR001 when the whole balance does not cover a debit, LR003 past 2^127 - 1.
-- The version of the slot changed (or, for a rebalance, of the main row)
-- counts the change.
CREATE FUNCTION ledger_spread_change(p_tenant TEXT, p_workspace TEXT, p_environment TEXT, p_ledger TEXT, p_name TEXT,
	p_decimals INTEGER, p_delta NUMERIC, p_start INTEGER, p_slots INTEGER, p_room BOOLEAN, p_now TIMESTAMPTZ)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
	bound CONSTANT NUMERIC := 170141183460469231731687303715884105727;
	d INTEGER;
	s INTEGER;
	b NUMERIC;
	rm NUMERIC;
	total NUMERIC;
	n INTEGER := 0;
	r RECORD;
BEGIN
	SELECT decimals INTO d FROM ledger_accounts
		WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
			AND ledger = p_ledger AND name = p_name;
	IF NOT FOUND THEN
		INSERT INTO ledger_accounts (tenant_id, workspace_id, environment, ledger, name, decimals, allow_negative, balance,
				version, created_at, updated_at)
			VALUES (p_tenant, p_workspace, p_environment, p_ledger, p_name, p_decimals, FALSE, 0, 0, p_now, p_now)
			ON CONFLICT (tenant_id, workspace_id, environment, ledger, name) DO NOTHING;
		SELECT decimals INTO d FROM ledger_accounts
			WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
				AND ledger = p_ledger AND name = p_name;
	END IF;
	IF d IS DISTINCT FROM p_decimals THEN
		PERFORM ledger_refuse('LR002');
	END IF;
	-- A slot that can take the change and that no other transaction holds.
	-- The search runs in a block of its own, rolled back when it finds
	-- none: a slot it locked and then found changed past use (PostgreSQL
	-- keeps such locks) is released, so this transaction holds no slot of
	-- the account when it goes on to wait.
	BEGIN
		IF p_delta < 0 THEN
			SELECT slot INTO s FROM ledger_account_slots
				WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
					AND ledger = p_ledger AND name = p_name AND balance >= -p_delta
				ORDER BY (slot + p_slots - p_start) % p_slots LIMIT 1 FOR UPDATE SKIP LOCKED;
		ELSE
			SELECT slot INTO s FROM ledger_account_slots
				WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
					AND ledger = p_ledger AND name = p_name AND room >= p_delta
				ORDER BY (slot + p_slots - p_start) % p_slots LIMIT 1 FOR UPDATE SKIP LOCKED;
		END IF;
		IF s IS NULL THEN
			RAISE EXCEPTION 'no free slot' USING ERRCODE = 'LR100';
		END IF;
	EXCEPTION WHEN SQLSTATE 'LR100' THEN
		s := NULL;
	END;
	IF s IS NULL THEN
		-- Every slot that could take the change is held: wait for one of
		-- them, holding nothing else of the account, and take it if it
		-- still can.
		IF p_delta < 0 THEN
			SELECT slot INTO s FROM ledger_account_slots
				WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
					AND ledger = p_ledger AND name = p_name AND balance >= -p_delta
				ORDER BY (slot + p_slots - p_start) % p_slots LIMIT 1;
		ELSE
			SELECT slot INTO s FROM ledger_account_slots
				WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
					AND ledger = p_ledger AND name = p_name AND room >= p_delta
				ORDER BY (slot + p_slots - p_start) % p_slots LIMIT 1;
		END IF;
		IF s IS NOT NULL THEN
			BEGIN
				SELECT balance, room INTO b, rm FROM ledger_account_slots
					WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
						AND ledger = p_ledger AND name = p_name AND slot = s
					FOR UPDATE;
				IF b + p_delta < 0 OR rm - p_delta < 0 THEN
					RAISE EXCEPTION 'slot spent' USING ERRCODE = 'LR100';
				END IF;
			EXCEPTION WHEN SQLSTATE 'LR100' THEN
				s := NULL;
			END;
		END IF;
	END IF;
	IF s IS NOT NULL THEN
		UPDATE ledger_account_slots SET balance = balance + p_delta, room = room - p_delta, version = version + 1,
				updated_at = p_now
			WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
				AND ledger = p_ledger AND name = p_name AND slot = s;
		RETURN;
	END IF;

	-- Rebalance: the main row, then every slot in order.
	SELECT balance INTO total FROM ledger_accounts
		WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
			AND ledger = p_ledger AND name = p_name
		FOR UPDATE;
	INSERT INTO ledger_account_slots (tenant_id, workspace_id, environment, ledger, name, slot, balance, room,
			version, updated_at)
		SELECT p_tenant, p_workspace, p_environment, p_ledger, p_name, g, 0, 0, 0, p_now
			FROM generate_series(0, p_slots - 1) AS g
		ON CONFLICT DO NOTHING;
	FOR r IN SELECT balance FROM ledger_account_slots
			WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
				AND ledger = p_ledger AND name = p_name
			ORDER BY slot FOR UPDATE LOOP
		total := total + r.balance;
		n := n + 1;
	END LOOP;
	total := total + p_delta;
	IF total < 0 THEN
		PERFORM ledger_refuse('LR001');
	END IF;
	IF total > bound THEN
		PERFORM ledger_refuse('LR003');
	END IF;
	UPDATE ledger_account_slots SET balance = div(total, n),
			room = CASE WHEN p_room THEN div(bound - total, n) ELSE 0 END, updated_at = p_now
		WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
			AND ledger = p_ledger AND name = p_name;
	UPDATE ledger_accounts SET balance = total - div(total, n) * n, version = version + 1, updated_at = p_now
		WHERE tenant_id = p_tenant AND workspace_id = p_workspace AND environment = p_environment
			AND ledger = p_ledger AND name = p_name;
END
$$;
