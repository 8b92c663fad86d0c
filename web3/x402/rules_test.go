package x402_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/web3/x402"
)

// key derives a deterministic ed25519 key and its address from name.
func key(name string) (ed25519.PrivateKey, chain.Address) {
	seed := sha256.Sum256([]byte("x402 test key " + name))
	k := ed25519.NewKeyFromSeed(seed[:])
	var a chain.Address
	copy(a[:], k.Public().(ed25519.PublicKey))
	return k, a
}

// addr derives an address from name.
func addr(name string) chain.Address {
	return chain.Address(sha256.Sum256([]byte("x402 test address " + name)))
}

// fixture is a payment's parties and requirements.
type fixture struct {
	feePayerKey, payerKey ed25519.PrivateKey
	feePayer, payer       chain.Address
	mint, payTo, program  chain.Address
	req                   x402.Requirements
	blockhash             string
}

func newFixture() fixture {
	var f fixture
	f.feePayerKey, f.feePayer = key("fee payer")
	f.payerKey, f.payer = key("payer")
	f.mint, f.payTo, f.program = addr("mint"), addr("pay to"), message.SPLTokenProgramID()
	f.blockhash = addr("blockhash").String()
	f.req = x402.Requirements{Scheme: x402.SchemeExact, Network: "solana:test", Amount: "1000000", Asset: f.mint.String(),
		PayTo: f.payTo.String(), MaxTimeoutSeconds: 60, Extra: x402.Extra{FeePayer: f.feePayer.String(), Memo: "x402:memo-1"}}
	return f
}

// instructions are the valid payment's instructions.
func (f fixture) instructions(t *testing.T) []message.Instruction {
	t.Helper()
	ixs, err := x402.PaymentInstructions(f.req, f.payer, f.program, 6, "")
	if err != nil {
		t.Fatal(err)
	}
	return ixs
}

// transaction signs ixs with keys and decodes the result.
func (f fixture) transaction(t *testing.T, ixs []message.Instruction, keys ...ed25519.PrivateKey) x402.Transaction {
	t.Helper()
	wire, err := x402.SignTransaction(f.feePayer, f.blockhash, ixs, keys...)
	if err != nil {
		t.Fatal(err)
	}
	tx, inv := x402.DecodeTransaction(base64.StdEncoding.EncodeToString(wire))
	if inv != nil {
		t.Fatal(inv)
	}
	return tx
}

// transfer is the valid payment's transfer with changes.
func (f fixture) transfer(source, mint, destination, owner chain.Address, amount uint64) message.Instruction {
	return message.TransferChecked(f.program, source, mint, destination, owner, amount, 6)
}

// TestCheckTransactionRules breaks each rule of CheckTransaction alone and
// expects its reason; the unbroken payment passes.
func TestCheckTransactionRules(t *testing.T) {
	f := newFixture()
	source := token2022.AssociatedTokenAddressFor(f.payer, f.mint, f.program)
	dest := token2022.AssociatedTokenAddressFor(f.payTo, f.mint, f.program)
	strangerKey, stranger := key("stranger")
	with := func(i int, ix message.Instruction) func([]message.Instruction) []message.Instruction {
		return func(ixs []message.Instruction) []message.Instruction { ixs[i] = ix; return ixs }
	}
	cases := []struct {
		name   string
		req    func(r *x402.Requirements)
		ixs    func([]message.Instruction) []message.Instruction
		keys   []ed25519.PrivateKey // nil means the payer alone
		wire   func(t *testing.T, tx x402.Transaction) x402.Transaction
		reason string
	}{
		{name: "valid"},
		{name: "fee payer is not the facilitator's", req: func(r *x402.Requirements) { r.Extra.FeePayer = stranger.String() },
			reason: x402.ReasonFeePayerMismatch},
		{name: "fee payer slot signed", keys: []ed25519.PrivateKey{f.feePayerKey, f.payerKey}, reason: x402.ReasonFeePayerSigned},
		{name: "two instructions", ixs: func(ixs []message.Instruction) []message.Instruction { return ixs[:2] },
			keys: []ed25519.PrivateKey{}, reason: x402.ReasonInstructionsLength},
		{name: "seven instructions", ixs: func(ixs []message.Instruction) []message.Instruction {
			return append(ixs, message.Memo("a"), message.Memo("b"), message.Memo("c"))
		}, reason: x402.ReasonInstructionsLength},
		{name: "no compute unit limit first", ixs: func(ixs []message.Instruction) []message.Instruction {
			ixs[0], ixs[1] = ixs[1], ixs[0]
			return ixs
		}, reason: x402.ReasonComputeLimit},
		{name: "no compute unit price second", ixs: with(1, message.SetComputeUnitLimit(1)), reason: x402.ReasonComputePrice},
		{name: "compute unit price over the cap", ixs: with(1, message.SetComputeUnitPrice(x402.MaxComputeUnitPrice+1)),
			reason: x402.ReasonComputePriceTooHigh},
		{name: "transfer with fee instead of TransferChecked",
			ixs: with(2, message.TransferCheckedWithFee(source, f.mint, dest, f.payer, 1_000_000, 6, 0)), reason: x402.ReasonNoTransfer},
		{name: "transfer by another program", ixs: with(2, message.Instruction{ProgramID: addr("program"),
			Accounts: []message.AccountMeta{{Key: f.payer, Signer: true}}, Data: []byte{12}}), reason: x402.ReasonNoTransfer},
		{name: "unknown fourth instruction", ixs: with(3, message.Instruction{ProgramID: addr("program"), Data: []byte{1}}),
			reason: x402.ReasonFourth},
		{name: "unknown fifth instruction", ixs: func(ixs []message.Instruction) []message.Instruction {
			return append(ixs, message.Instruction{ProgramID: addr("program"), Data: []byte{1}})
		}, reason: x402.ReasonFifth},
		{name: "fee payer is the authority", keys: []ed25519.PrivateKey{},
			ixs: with(2, f.transfer(source, f.mint, dest, f.feePayer, 1_000_000)), reason: x402.ReasonFeePayerInInstruction},
		{name: "fee payer is the source", ixs: with(2, f.transfer(f.feePayer, f.mint, dest, f.payer, 1_000_000)),
			reason: x402.ReasonFeePayerInInstruction},
		{name: "fee payer signs the memo", ixs: with(3, message.Memo(f.req.Extra.Memo, f.feePayer)),
			reason: x402.ReasonFeePayerInInstruction},
		{name: "another mint", ixs: with(2, f.transfer(source, addr("other mint"), dest, f.payer, 1_000_000)), reason: x402.ReasonMint},
		{name: "another destination", ixs: with(2, f.transfer(source, f.mint,
			token2022.AssociatedTokenAddressFor(stranger, f.mint, f.program), f.payer, 1_000_000)), reason: x402.ReasonRecipient},
		{name: "payTo's wallet, not its token account", ixs: with(2, f.transfer(source, f.mint, f.payTo, f.payer, 1_000_000)),
			reason: x402.ReasonRecipient},
		{name: "less than the amount", ixs: with(2, f.transfer(source, f.mint, dest, f.payer, 999_999)), reason: x402.ReasonAmount},
		{name: "more than the amount", ixs: with(2, f.transfer(source, f.mint, dest, f.payer, 1_000_001)), reason: x402.ReasonAmount},
		{name: "no memo", ixs: func(ixs []message.Instruction) []message.Instruction { return ixs[:3] }, reason: x402.ReasonMemoCount},
		{name: "two memos", ixs: func(ixs []message.Instruction) []message.Instruction {
			return append(ixs, message.Memo(f.req.Extra.Memo))
		}, reason: x402.ReasonMemoCount},
		{name: "another memo", ixs: with(3, message.Memo("x402:memo-2")), reason: x402.ReasonMemoMismatch},
		{name: "a third signer", ixs: with(3, message.Memo(f.req.Extra.Memo, stranger)),
			keys: []ed25519.PrivateKey{f.payerKey, strangerKey}, reason: x402.ReasonSigners},
		{name: "the authority's signature does not verify", wire: func(t *testing.T, tx x402.Transaction) x402.Transaction {
			tx.Signatures[1] = slices.Clone(tx.Signatures[1])
			tx.Signatures[1][0] ^= 1
			return tx
		}, reason: x402.ReasonSignature},
		{name: "the authority did not sign", keys: []ed25519.PrivateKey{}, reason: x402.ReasonSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := f.req
			if c.req != nil {
				c.req(&req)
			}
			ixs := f.instructions(t)
			if c.ixs != nil {
				ixs = c.ixs(ixs)
			}
			keys := c.keys
			if keys == nil {
				keys = []ed25519.PrivateKey{f.payerKey}
			}
			tx := f.transaction(t, ixs, keys...)
			if c.wire != nil {
				tx = c.wire(t, tx)
			}
			p, inv := x402.CheckTransaction(req, tx)
			if c.reason == "" {
				if inv != nil {
					t.Fatalf("the valid payment is refused: %v", inv)
				}
				if p.Amount != 1_000_000 || p.Authority != f.payer || p.Destination != dest || p.Memo != f.req.Extra.Memo {
					t.Fatalf("payment %+v", p)
				}
				return
			}
			if inv == nil || inv.Reason != c.reason {
				t.Fatalf("got %v, want reason %s", inv, c.reason)
			}
		})
	}
}

func TestCheckTransactionRefusesLookupTables(t *testing.T) {
	f := newFixture()
	c, err := message.Compile(message.V0, f.feePayer, f.blockhash, f.instructions(t),
		[]message.LookupTable{{Address: addr("table"), Addresses: []chain.Address{f.mint}}})
	if err != nil || len(c.Lookups) != 1 {
		t.Fatalf("compile with a table: %v, %d lookups", err, len(c.Lookups))
	}
	tx, inv := x402.DecodeTransaction(base64.StdEncoding.EncodeToString(message.Unsigned(c.Bytes)))
	if inv != nil {
		t.Fatal(inv)
	}
	if _, inv := x402.CheckTransaction(f.req, tx); inv == nil || inv.Reason != x402.ReasonLookupTables {
		t.Fatalf("got %v", inv)
	}
}

func TestDecodePaymentTransactionRefusesOtherPayloads(t *testing.T) {
	for name, c := range map[string]struct {
		payload string
		reason  string
	}{
		"not an object":   {`"x"`, x402.ReasonPayload},
		"no transaction":  {`{"signature":"x"}`, x402.ReasonPayload},
		"not base64":      {`{"transaction":"%%%"}`, x402.ReasonUndecodable},
		"not transaction": {`{"transaction":"` + base64.StdEncoding.EncodeToString([]byte("hello")) + `"}`, x402.ReasonUndecodable},
	} {
		_, inv := x402.DecodePaymentTransaction(x402.PaymentPayload{X402Version: 2, Payload: json.RawMessage(c.payload)})
		if inv == nil || inv.Reason != c.reason {
			t.Errorf("%s: got %v, want %s", name, inv, c.reason)
		}
	}
}

// TestCheckAccountsRules breaks each rule of CheckAccounts alone.
func TestCheckAccountsRules(t *testing.T) {
	f := newFixture()
	p, inv := x402.CheckTransaction(f.req, f.transaction(t, f.instructions(t), f.payerKey))
	if inv != nil {
		t.Fatal(inv)
	}
	mint := func(decimals uint8, owner chain.Address) *chain.AccountInfo {
		return &chain.AccountInfo{Owner: owner, Data: token2022.EncodeMint(token2022.Mint{Decimals: decimals, IsInitialized: true})}
	}
	account := func(mint, owner chain.Address, amount uint64) *chain.AccountInfo {
		return &chain.AccountInfo{Owner: f.program, Data: token2022.EncodeAccount(token2022.Account{Mint: mint, Owner: owner,
			Amount: amount, State: token2022.StateInitialized})}
	}
	valid := func() x402.Facts {
		return x402.Facts{Mint: mint(6, f.program), Source: account(f.mint, f.payer, 5_000_000),
			Destination: account(f.mint, f.payTo, 0), BlockhashValid: true}
	}
	cases := []struct {
		name   string
		change func(*x402.Facts)
		reason string
	}{
		{name: "valid"},
		{name: "no mint", change: func(x *x402.Facts) { x.Mint = nil }, reason: x402.ReasonTokenProgram},
		{name: "mint of another program", change: func(x *x402.Facts) { x.Mint = mint(6, token2022.ProgramID()) }, reason: x402.ReasonTokenProgram},
		{name: "other decimals", change: func(x *x402.Facts) { x.Mint = mint(9, f.program) }, reason: x402.ReasonDecimals},
		{name: "no source", change: func(x *x402.Facts) { x.Source = nil }, reason: x402.ReasonSourceMissing},
		{name: "someone else's source", change: func(x *x402.Facts) { x.Source = account(f.mint, addr("other"), 5_000_000) },
			reason: x402.ReasonSourceMissing},
		{name: "source of another mint", change: func(x *x402.Facts) { x.Source = account(addr("m2"), f.payer, 5_000_000) },
			reason: x402.ReasonSourceMissing},
		{name: "too little", change: func(x *x402.Facts) { x.Source = account(f.mint, f.payer, 999_999) }, reason: x402.ReasonInsufficientFunds},
		{name: "no destination", change: func(x *x402.Facts) { x.Destination = nil }, reason: x402.ReasonDestinationMissing},
		{name: "destination of another owner", change: func(x *x402.Facts) { x.Destination = account(f.mint, addr("other"), 0) },
			reason: x402.ReasonDestinationMissing},
		{name: "blockhash lapsed", change: func(x *x402.Facts) { x.BlockhashValid = false }, reason: x402.ReasonBlockhash},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			facts := valid()
			if c.change != nil {
				c.change(&facts)
			}
			inv := x402.CheckAccounts(f.req, p, facts)
			if c.reason == "" {
				if inv != nil {
					t.Fatalf("the valid payment is refused: %v", inv)
				}
				return
			}
			if inv == nil || inv.Reason != c.reason {
				t.Fatalf("got %v, want %s", inv, c.reason)
			}
		})
	}
}
