-- Version 30 serves the payment-required protocol (web3/x402).
--
-- An idempotency record keeps the response headers its route documents
-- that the first answer carried (a PAYMENT-RESPONSE, say), as a JSON
-- object of name to value, so a replay answers them again; NULL when
-- none.
ALTER TABLE idempotency_records ADD COLUMN response_headers TEXT;
