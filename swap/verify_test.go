package swap

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/money"
)

// tb is a token balance entry.
func tb(idx int, acct, owner, mint chain.Address, amount uint64) chain.TokenBalance {
	prog := address(tokenProgram)
	if mint == outMint {
		prog = token2022.ProgramID()
	}
	return chain.TokenBalance{AccountIndex: idx, Account: acct, Owner: owner, Mint: mint, ProgramID: prog, Amount: amount}
}

// testObserved is the transaction testIntent expects: the wallet pays
// 1,000,000,000 of the input mint (980,000,000 to the route and 20,000,000
// to the fee account), receives 4,990,000 of the output mint into an
// account created in the transaction (2,039,280 lamports of rent), and
// pays a fee of 19,000 lamports.
func testObserved() Observed {
	const walletLamports = 10_000_000_000
	return Observed{
		Signature: "sig1", Network: mainnet.CAIP2(), Slot: 77, Fee: 19_000,
		Keys:       []chain.Address{wallet, walletIn, walletOut, feeAccount, poolAcct, JupiterV6ProgramID(), address(computeBudgetProgram)},
		NumSigners: 1,
		Instructions: []chain.Instruction{
			{ProgramID: address(computeBudgetProgram)},
			{ProgramID: token2022.AssociatedTokenProgramID()},
			{ProgramID: JupiterV6ProgramID()},
		},
		PreTokenBalances: []chain.TokenBalance{
			tb(1, walletIn, wallet, inMint, 1_500_000_000),
			tb(3, feeAccount, feeRecipient, inMint, 7),
			tb(4, poolAcct, stranger, outMint, 900_000_000),
		},
		PostTokenBalances: []chain.TokenBalance{
			tb(1, walletIn, wallet, inMint, 500_000_000),
			tb(2, walletOut, wallet, outMint, 4_990_000),
			tb(3, feeAccount, feeRecipient, inMint, 20_000_007),
			tb(4, poolAcct, stranger, outMint, 895_010_000),
		},
		PreBalances:  []uint64{walletLamports, 2_039_280, 0, 2_039_280, 2_039_280, 1, 1},
		PostBalances: []uint64{walletLamports - 19_000 - 2_039_280, 2_039_280, 2_039_280, 2_039_280, 2_039_280, 1, 1},
	}
}

// noBinding is a BoundIntentFunc for a signature bound to nothing.
func noBinding(string) (string, error) { return "", nil }

// testParams verifies testObserved against testIntent.
func testParams(t *testing.T) VerifyParams {
	return VerifyParams{
		Intent: testIntent(t), Observed: testObserved(), SwapPrograms: []chain.Address{JupiterV6ProgramID()},
		BoundIntentFunc: noBinding, ObservedAt: t0.Add(time.Minute),
	}
}

// failed returns the names of v's failed checks.
func failed(v Verification) []CheckName {
	var out []CheckName
	for _, c := range v.Failed() {
		out = append(out, c.Name)
	}
	return out
}

// verify runs Verify and fails the test on an error.
func verify(t *testing.T, p VerifyParams) Verification {
	t.Helper()
	v, err := Verify(p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// intentWith binds testQuote after edit.
func intentWith(t *testing.T, edit func(*Quote)) Intent {
	t.Helper()
	q := testQuote()
	edit(&q)
	it, err := NewIntent(q.Seal(), testBinding(), t0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// entry returns a pointer to the entry of list for account.
func entry(t *testing.T, list []chain.TokenBalance, account chain.Address) *chain.TokenBalance {
	t.Helper()
	for i := range list {
		if list[i].Account == account {
			return &list[i]
		}
	}
	t.Fatalf("no entry for %s", account)
	return nil
}

func TestVerifyMatchingSwap(t *testing.T) {
	p := testParams(t)
	v := verify(t, p)
	if !v.Passed() || len(v.Failed()) != 0 {
		t.Fatalf("failed checks: %+v", v.Failed())
	}
	if len(v.Checks) != 13 {
		t.Errorf("%d checks recorded, want 13", len(v.Checks))
	}
	for _, e := range []struct {
		name string
		got  money.Sum
		want string
	}{
		{"InputDebited", v.InputDebited, "1000000000"}, {"ExecutableInput", v.ExecutableInput, "980000000"},
		{"FeeReceived", v.FeeReceived, "20000000"}, {"OutputReceived", v.OutputReceived, "4990000"},
		{"LamportsSpent", v.LamportsSpent, "2058280"},
	} {
		if e.got.String() != e.want {
			t.Errorf("%s = %s, want %s", e.name, e.got, e.want)
		}
	}
	if v.RequiredOutput != 4_975_000 || !v.LamportBalances || v.NetworkFeeLamports != 19_000 {
		t.Errorf("RequiredOutput %d, LamportBalances %v, fee %d", v.RequiredOutput, v.LamportBalances, v.NetworkFeeLamports)
	}
	if !slices.Equal(v.Signers, []chain.Address{wallet}) || len(v.ExtraSigners) != 0 || len(v.Programs) != 3 {
		t.Errorf("signers %v, extra %v, programs %v", v.Signers, v.ExtraSigners, v.Programs)
	}
	if v.IntentID != p.Intent.ID || v.Signature != "sig1" || v.Slot != 77 || !v.ObservedAt.Equal(p.ObservedAt) {
		t.Errorf("identity: %+v", v)
	}
	if c, ok := v.Check(CheckMinimumOutput); !ok || c.Expected != "4975000" || c.Actual != "4990000" {
		t.Errorf("minimum output check = %+v", c)
	}
}

func TestVerifyFindings(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, p *VerifyParams)
		want []CheckName
	}{
		{"transaction failed", func(_ *testing.T, p *VerifyParams) { p.Observed.Err = `{"InstructionError":[2,{"Custom":6001}]}` },
			[]CheckName{CheckSuccess}},
		{"another network", func(_ *testing.T, p *VerifyParams) {
			p.Observed.Network = chain.Network{GenesisHash: chain.DevnetGenesisHash}.CAIP2()
		}, []CheckName{CheckNetwork}},
		{"a second signer", func(_ *testing.T, p *VerifyParams) { p.Observed.NumSigners = 2 },
			[]CheckName{CheckExtraSigners}},
		{"wallet did not sign", func(_ *testing.T, p *VerifyParams) { p.Observed.Keys[0] = stranger },
			[]CheckName{CheckSigner, CheckExtraSigners}},
		{"signature bound to another intent", func(_ *testing.T, p *VerifyParams) {
			p.BoundIntentFunc = func(string) (string, error) { return "swi_other", nil }
		}, []CheckName{CheckUniqueness}},
		{"signature bound to this intent", func(_ *testing.T, p *VerifyParams) {
			p.BoundIntentFunc = func(string) (string, error) { return p.Intent.ID, nil }
		}, nil},
		{"no signature", func(_ *testing.T, p *VerifyParams) { p.Observed.Signature = "" },
			[]CheckName{CheckUniqueness}},
		{"unknown top-level program", func(_ *testing.T, p *VerifyParams) {
			p.Observed.Instructions = append(p.Observed.Instructions, chain.Instruction{ProgramID: stranger})
		}, []CheckName{CheckPrograms}},
		{"swap program not configured", func(_ *testing.T, p *VerifyParams) { p.SwapPrograms = nil },
			[]CheckName{CheckPrograms}},
		{"memo and token programs allowed", func(_ *testing.T, p *VerifyParams) {
			p.Observed.Instructions = append(p.Observed.Instructions, chain.Instruction{ProgramID: address(memoProgram)},
				chain.Instruction{ProgramID: address(tokenProgram)}, chain.Instruction{ProgramID: address(systemProgram)})
		}, nil},
		{"one unit more input", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletIn).Amount--
		}, []CheckName{CheckExecutableInput}},
		{"fee account owned by someone else", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PreTokenBalances, feeAccount).Owner = stranger
			entry(t, p.Observed.PostTokenBalances, feeAccount).Owner = stranger
		}, []CheckName{CheckFeeRecipient}},
		{"fee account of another mint", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, feeAccount).Mint = outMint
			entry(t, p.Observed.PostTokenBalances, feeAccount).ProgramID = token2022.ProgramID()
		}, []CheckName{CheckFeeRecipient}},
		{"fee never paid", func(_ *testing.T, p *VerifyParams) {
			p.Observed.PreTokenBalances = slices.DeleteFunc(p.Observed.PreTokenBalances, func(b chain.TokenBalance) bool { return b.Account == feeAccount })
			p.Observed.PostTokenBalances = slices.DeleteFunc(p.Observed.PostTokenBalances, func(b chain.TokenBalance) bool { return b.Account == feeAccount })
			entry(t, p.Observed.PostTokenBalances, walletIn).Amount += 20_000_000
		}, []CheckName{CheckExecutableInput, CheckFeeRecipient, CheckServiceFee}},
		{"fee one unit short", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, feeAccount).Amount--
		}, []CheckName{CheckServiceFee}},
		{"output below the minimum", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletOut).Amount = 4_974_999
		}, []CheckName{CheckMinimumOutput}},
		{"output exactly the minimum", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletOut).Amount = 4_975_000
		}, nil},
		{"output to an account the wallet does not own", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletOut).Owner = stranger
		}, []CheckName{CheckMinimumOutput}},
		{"output over two wallet accounts", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletOut).Amount = 2_000_000
			p.Observed.PreTokenBalances = append(p.Observed.PreTokenBalances, tb(0, strangerAcct, wallet, outMint, 10))
			p.Observed.PostTokenBalances = append(p.Observed.PostTokenBalances, tb(0, strangerAcct, wallet, outMint, 2_990_010))
		}, nil},
		{"input account closed", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PreTokenBalances, walletIn).Amount = 1_000_000_000
			p.Observed.PostTokenBalances = slices.DeleteFunc(p.Observed.PostTokenBalances, func(b chain.TokenBalance) bool { return b.Account == walletIn })
		}, nil},
		{"wallet's input account handed to someone else", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletIn).Owner = stranger
		}, []CheckName{CheckExecutableInput}},
		{"another mint moved", func(_ *testing.T, p *VerifyParams) {
			other := key(12)
			p.Observed.PreTokenBalances = append(p.Observed.PreTokenBalances, tb(0, strangerAcct, wallet, other, 50))
			p.Observed.PostTokenBalances = append(p.Observed.PostTokenBalances, tb(0, strangerAcct, wallet, other, 0))
		}, []CheckName{CheckMints}},
		{"output held under another token program", func(t *testing.T, p *VerifyParams) {
			entry(t, p.Observed.PostTokenBalances, walletOut).ProgramID = address(tokenProgram)
		}, []CheckName{CheckTokenPrograms}},
		{"a balance whose account cannot be resolved", func(_ *testing.T, p *VerifyParams) {
			p.Observed.PostTokenBalances = append(p.Observed.PostTokenBalances,
				chain.TokenBalance{AccountIndex: 99, Owner: stranger, Mint: outMint, Amount: 1})
		}, []CheckName{CheckBalances}},
		{"Token-2022 output fee withheld", func(t *testing.T, p *VerifyParams) {
			p.TransferFees = map[chain.Address]token2022.TransferFee{outMint: {BasisPoints: 100, MaximumFee: 1 << 40}}
			entry(t, p.Observed.PostTokenBalances, walletOut).Amount = 4_925_250 // 4,975,000 − 49,750
		}, nil},
		{"Token-2022 output fee, one unit under", func(t *testing.T, p *VerifyParams) {
			p.TransferFees = map[chain.Address]token2022.TransferFee{outMint: {BasisPoints: 100, MaximumFee: 1 << 40}}
			entry(t, p.Observed.PostTokenBalances, walletOut).Amount = 4_925_249
		}, []CheckName{CheckMinimumOutput}},
		{"Token-2022 fee on the service fee", func(t *testing.T, p *VerifyParams) {
			p.TransferFees = map[chain.Address]token2022.TransferFee{inMint: {BasisPoints: 50, MaximumFee: 1 << 40}}
			entry(t, p.Observed.PostTokenBalances, feeAccount).Amount = 7 + 19_900_000 // 20,000,000 − 100,000 withheld
		}, nil},
		{"Token-2022 fee not withheld", func(_ *testing.T, p *VerifyParams) {
			p.TransferFees = map[chain.Address]token2022.TransferFee{inMint: {BasisPoints: 50, MaximumFee: 1 << 40}}
		}, []CheckName{CheckServiceFee}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testParams(t)
			tt.edit(t, &p)
			v := verify(t, p)
			if got := failed(v); !slices.Equal(got, tt.want) {
				t.Errorf("failed checks %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVerifyEffects(t *testing.T) {
	p := testParams(t)
	entry(t, p.Observed.PostTokenBalances, walletIn).Owner = stranger
	p.Observed.NumSigners = 2
	p.Observed.Instructions = append(p.Observed.Instructions, chain.Instruction{ProgramID: stranger}, chain.Instruction{ProgramID: stranger})
	v := verify(t, p)
	if v.InputDebited.String() != "1500000000" {
		t.Errorf("an account handed away counts as debited in full: InputDebited %s", v.InputDebited)
	}
	if !slices.Equal(v.ExtraSigners, []chain.Address{walletIn}) || !slices.Equal(v.UnknownPrograms, []chain.Address{stranger}) {
		t.Errorf("extra signers %v, unknown programs %v", v.ExtraSigners, v.UnknownPrograms)
	}

	p = testParams(t)
	entry(t, p.Observed.PreTokenBalances, walletIn).Amount = 1_000_000_000
	p.Observed.PostTokenBalances = slices.DeleteFunc(p.Observed.PostTokenBalances, func(b chain.TokenBalance) bool { return b.Account == walletIn })
	p.Observed.PostBalances[1] = 0
	p.Observed.PostBalances[0] += 2_039_280
	v = verify(t, p)
	if v.LamportsSpent.String() != "19000" {
		t.Errorf("rent recovered from a closed account: LamportsSpent %s, want 19000", v.LamportsSpent)
	}

	p = testParams(t)
	p.Observed.PreBalances, p.Observed.PostBalances = nil, nil
	v = verify(t, p)
	if !v.Passed() || v.LamportBalances || v.LamportsSpent.String() != "19000" {
		t.Errorf("without lamport balances: passed %v, LamportBalances %v, LamportsSpent %s (want the fee only)",
			v.Passed(), v.LamportBalances, v.LamportsSpent)
	}
}

func TestVerifyLookupErrors(t *testing.T) {
	p := testParams(t)
	boom := errors.New("store down")
	p.BoundIntentFunc = func(string) (string, error) { return "", boom }
	if _, err := Verify(p); !errors.Is(err, boom) {
		t.Errorf("lookup failure = %v, want it wrapped", err)
	}
	p.BoundIntentFunc = nil
	if _, err := Verify(p); err == nil {
		t.Error("Verify without a lookup succeeded")
	}
}

// nativeInput returns params for a swap of the native coin: the wallet
// wraps 1,000,000,000 lamports in a temporary account created and closed
// in the transaction (no balance entries), pays the 20,000,000 fee into
// the recipient's wrapped account and swaps the rest.
func nativeInput(t *testing.T) VerifyParams {
	p := testParams(t)
	p.Intent = intentWith(t, func(q *Quote) {
		q.InputMint, q.FeeBreakdown.ServiceFeeMint = NativeMint(), NativeMint()
	})
	o := &p.Observed
	o.PreTokenBalances = []chain.TokenBalance{tb(3, feeAccount, feeRecipient, NativeMint(), 7), tb(4, poolAcct, stranger, outMint, 900_000_000)}
	o.PostTokenBalances = []chain.TokenBalance{tb(2, walletOut, wallet, outMint, 4_990_000),
		tb(3, feeAccount, feeRecipient, NativeMint(), 20_000_007), tb(4, poolAcct, stranger, outMint, 895_010_000)}
	o.PreBalances[1], o.PostBalances[1] = 0, 0 // the temporary account
	o.PreBalances[3], o.PostBalances[3] = 2_039_287, 2_059_287
	o.PostBalances[0] = o.PreBalances[0] - 19_000 - 2_039_280 - 1_000_000_000
	return p
}

func TestVerifyNativeInput(t *testing.T) {
	v := verify(t, nativeInput(t))
	if !v.Passed() {
		t.Fatalf("failed: %+v", v.Failed())
	}
	if v.InputDebited.String() != "1000000000" || v.LamportsSpent.String() != "2058280" {
		t.Errorf("InputDebited %s, LamportsSpent %s", v.InputDebited, v.LamportsSpent)
	}

	p := nativeInput(t)
	p.Observed.PostBalances[0] -= 1_000_000 // a tip nobody agreed to
	if got := failed(verify(t, p)); !slices.Equal(got, []CheckName{CheckExecutableInput}) {
		t.Errorf("an extra lamport outflow: failed %v", got)
	}

	p = nativeInput(t)
	p.Observed.PreBalances, p.Observed.PostBalances = nil, nil
	if got := failed(verify(t, p)); !slices.Equal(got, []CheckName{CheckBalances, CheckExecutableInput}) {
		t.Errorf("without lamport balances: failed %v", got)
	}
}

// TestVerifyNativeInputFromExistingWrappedAccount: the wallet's own
// wrapped account held 300,000,000; the route tops it up by 700,000,000
// lamports, spends 1,000,000,000 and closes it, returning its rent.
func TestVerifyNativeInputFromExistingWrappedAccount(t *testing.T) {
	p := nativeInput(t)
	o := &p.Observed
	o.PreTokenBalances = append(o.PreTokenBalances, tb(1, walletIn, wallet, NativeMint(), 300_000_000))
	o.PreBalances[1], o.PostBalances[1] = 2_039_280+300_000_000, 0
	o.PostBalances[0] = o.PreBalances[0] - 19_000 - 700_000_000 + 2_039_280 - 2_039_280
	v := verify(t, p)
	if !v.Passed() || v.InputDebited.String() != "1000000000" {
		t.Errorf("passed %v, InputDebited %s, failed %+v", v.Passed(), v.InputDebited, v.Failed())
	}
}

func TestVerifyNativeOutput(t *testing.T) {
	p := testParams(t)
	p.Intent = intentWith(t, func(q *Quote) { q.OutputMint, q.OutputTokenProgram = NativeMint(), address(tokenProgram) })
	o := &p.Observed
	o.PostTokenBalances = slices.DeleteFunc(o.PostTokenBalances, func(b chain.TokenBalance) bool { return b.Account == walletOut })
	o.PreBalances[2], o.PostBalances[2] = 0, 0 // a temporary wrapped account
	o.PostBalances[0] = o.PreBalances[0] - 19_000 + 4_990_000
	v := verify(t, p)
	if !v.Passed() || v.OutputReceived.String() != "4990000" || v.LamportsSpent.String() != "19000" {
		t.Errorf("passed %v, OutputReceived %s, LamportsSpent %s, failed %+v", v.Passed(), v.OutputReceived, v.LamportsSpent, v.Failed())
	}
}

func TestObservedFrom(t *testing.T) {
	bt := t0
	tx := chain.Transaction{
		Signature: "sig9", Slot: 5, BlockTime: &bt, Err: "", Fee: 5000,
		AccountKeys: []chain.Address{wallet, walletIn}, NumSigners: 1,
		Instructions:      []chain.Instruction{{ProgramID: JupiterV6ProgramID()}},
		PreTokenBalances:  []chain.TokenBalance{tb(1, walletIn, wallet, inMint, 2)},
		PostTokenBalances: []chain.TokenBalance{tb(1, walletIn, wallet, inMint, 1)},
	}
	o := ObservedFrom(tx, mainnet)
	if o.Network != "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" || o.Signature != "sig9" || o.Fee != 5000 || o.Slot != 5 ||
		!slices.Equal(o.Keys, tx.AccountKeys) || o.NumSigners != 1 || len(o.Instructions) != 1 ||
		len(o.PreTokenBalances) != 1 || len(o.PostTokenBalances) != 1 || o.PreBalances != nil || o.BlockTime != &bt {
		t.Errorf("ObservedFrom = %+v", o)
	}
	tx.AccountKeys[0] = stranger
	if o.Keys[0] != wallet {
		t.Error("ObservedFrom shares the transaction's key slice")
	}
}

func TestProgramIDs(t *testing.T) {
	for s, k := range map[string]chain.Address{
		"So11111111111111111111111111111111111111112": NativeMint(),
		"JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4": JupiterV6ProgramID(),
	} {
		if k.String() != s {
			t.Errorf("%s decodes to %s", s, k)
		}
	}
	want := []string{"ComputeBudget111111111111111111111111111111", "11111111111111111111111111111111",
		"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
		"ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL", "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
		"Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"}
	var got []string
	for _, k := range BasePrograms() {
		got = append(got, k.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("BasePrograms = %v", got)
	}
}
