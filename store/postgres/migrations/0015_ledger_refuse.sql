-- ledger_refuse raises the error of a balance change the ledger's rule
-- refuses, with code as its SQLSTATE (store.LedgerAccountsApply lists the
-- codes and turns them into the ledger's errors). The store changes
-- balances in place, in one UPDATE whose CASE calls this function when the
-- change would break the rule; the error aborts the transaction on the
-- server, so nothing of the unit of work is kept.
CREATE FUNCTION ledger_refuse(code TEXT) RETURNS NUMERIC
LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'ledger: the balance change was refused (%)', code USING ERRCODE = code;
END
$$;
