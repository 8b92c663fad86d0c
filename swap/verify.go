package swap

import (
	"errors"
	"slices"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// Observed is a landed transaction as the verifier reads it: the facts of
// getTransaction that effects are derived from, and nothing a client
// supplied.
type Observed struct {
	// Signature is the transaction's first signature (base58).
	Signature string
	// Network is the CAIP-2 id of the cluster it was read from (from the
	// node's genesis hash).
	Network string
	// Slot and BlockTime say when it landed; BlockTime may be unknown.
	Slot      uint64
	BlockTime *time.Time
	// Err is meta.err as JSON, "" when it succeeded.
	Err string
	// Fee is meta.fee in lamports, paid by Keys[0].
	Fee uint64
	// Keys is the full key list every index refers to: the message's
	// keys, then the loaded writable, then the loaded read-only addresses.
	// The first NumSigners signed.
	Keys       []chain.Address
	NumSigners int
	// Instructions are the top-level instructions.
	Instructions []chain.Instruction
	// PreTokenBalances and PostTokenBalances are the token balances
	// around it; an account created in it has no pre entry, one closed no
	// post entry.
	PreTokenBalances  []chain.TokenBalance
	PostTokenBalances []chain.TokenBalance
	// PreBalances and PostBalances are the lamports of each key around
	// it; nil when the source did not report them.
	PreBalances  []uint64
	PostBalances []uint64
}

// ObservedFrom converts a chain transaction read from network. Keys are
// its AccountKeys; loaded addresses and lamport balances are left empty
// until chain.Transaction reports them, so a native-coin leg cannot be
// measured yet (its check reports the data as missing).
func ObservedFrom(tx chain.Transaction, network chain.Network) Observed {
	return Observed{
		Signature: tx.Signature, Network: network.CAIP2(), Slot: tx.Slot, BlockTime: tx.BlockTime,
		Err: tx.Err, Fee: tx.Fee, Keys: slices.Clone(tx.AccountKeys), NumSigners: tx.NumSigners,
		Instructions:     slices.Clone(tx.Instructions),
		PreTokenBalances: slices.Clone(tx.PreTokenBalances), PostTokenBalances: slices.Clone(tx.PostTokenBalances),
	}
}

// CheckName names one verification check.
type CheckName string

// The checks, in the order Verify records them (swap.md §2).
const (
	// CheckNetwork: the transaction was read from the intent's network.
	CheckNetwork CheckName = "network"
	// CheckSuccess: meta.err is null.
	CheckSuccess CheckName = "success"
	// CheckSigner: the intent's wallet signed.
	CheckSigner CheckName = "signer"
	// CheckExtraSigners: nobody but the wallet signed.
	CheckExtraSigners CheckName = "extraSigners"
	// CheckUniqueness: the signature is bound to no other intent.
	CheckUniqueness CheckName = "uniqueness"
	// CheckPrograms: every top-level program is allowed.
	CheckPrograms CheckName = "programs"
	// CheckTokenPrograms: the input and output mints' balances are held
	// under the registry's token programs.
	CheckTokenPrograms CheckName = "tokenPrograms"
	// CheckMints: the wallet's balances moved only in the intent's mints.
	CheckMints CheckName = "mints"
	// CheckBalances: the balances the checks need were all reported.
	CheckBalances CheckName = "balances"
	// CheckExecutableInput: the wallet paid exactly the executable input,
	// plus the service fee when it is taken in the input mint.
	CheckExecutableInput CheckName = "executableInput"
	// CheckFeeRecipient: the fee account is owned by the fee recipient and
	// holds the fee mint.
	CheckFeeRecipient CheckName = "feeRecipient"
	// CheckServiceFee: the fee account received exactly the service fee,
	// less the fee mint's transfer fee.
	CheckServiceFee CheckName = "serviceFee"
	// CheckMinimumOutput: the wallet received at least the minimum output,
	// less the output mint's transfer fee on it.
	CheckMinimumOutput CheckName = "minimumOutput"
)

// Check is one verification check: what the intent expected, what the
// chain showed, and whether they agree.
type Check struct {
	// Name says which check it is; Passed whether it held.
	Name   CheckName
	Passed bool
	// Expected and Actual are the compared values as text (amounts in
	// canonical integers, keys in base58).
	Expected string
	Actual   string
}

// Verification is the normalized effect of a landed transaction and the
// result of each check against its intent. It is evidence: built from the
// chain's record alone, and never corrected.
type Verification struct {
	// IntentID and OperationID name what was verified.
	IntentID    string
	OperationID string
	// Signature, Network, Slot and BlockTime identify the transaction;
	// ObservedAt is when it was read.
	Signature  string
	Network    string
	Slot       uint64
	BlockTime  *time.Time
	ObservedAt time.Time
	// Success is meta.err == null; Err is meta.err.
	Success bool
	Err     string
	// Signers are the keys that signed; ExtraSigners those other than the
	// wallet.
	Signers      []chain.Address
	ExtraSigners []chain.Address
	// Programs are the distinct top-level programs, in order of first
	// call; UnknownPrograms those outside the allow-list.
	Programs        []chain.Address
	UnknownPrograms []chain.Address
	// BoundIntentID is the intent the signature is bound to, "" when none.
	BoundIntentID string
	// InputMint and OutputMint are the intent's.
	InputMint  chain.Address
	OutputMint chain.Address
	// InputDebited is what left the wallet in the input mint: Σ(pre −
	// post) of its accounts of that mint, or for the native coin its
	// lamports and wrapped balance net of network fee and rent.
	// ExecutableInput is InputDebited less the intended service fee when
	// the fee is taken in the input mint.
	InputDebited    money.Sum
	ExecutableInput money.Sum
	// FeeRecipient and FeeAccount are the intent's; FeeReceived is what
	// the fee account gained (post − pre).
	FeeRecipient chain.Address
	FeeAccount   chain.Address
	FeeReceived  money.Sum
	// OutputReceived is what reached the wallet in the output mint
	// (Σ(post − pre), or the native coin's net gain); RequiredOutput the
	// least it had to be.
	OutputReceived money.Sum
	RequiredOutput money.Atomic
	// OtherMints are the mints outside the intent the wallet's balances
	// moved in.
	OtherMints []chain.Address
	// NetworkFeeLamports is meta.fee. LamportsSpent is what the wallet
	// spent in lamports beside the swap (fee, rent, anything unexplained);
	// with LamportBalances false it is only the fee it paid, a lower
	// bound.
	NetworkFeeLamports uint64
	LamportsSpent      money.Sum
	LamportBalances    bool
	// InputTransferFee, OutputTransferFee and FeeMintTransferFee are the
	// Token-2022 fees applied at the transaction's epoch (zero when none).
	InputTransferFee   token2022.TransferFee
	OutputTransferFee  token2022.TransferFee
	FeeMintTransferFee token2022.TransferFee
	// Checks are the results, in the order of the Check constants.
	Checks []Check
}

// Passed reports whether every check passed.
func (v Verification) Passed() bool {
	return !slices.ContainsFunc(v.Checks, func(c Check) bool { return !c.Passed })
}

// Failed returns the checks that did not pass.
func (v Verification) Failed() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Passed {
			out = append(out, c)
		}
	}
	return out
}

// Check returns the named check.
func (v Verification) Check(name CheckName) (Check, bool) {
	i := slices.IndexFunc(v.Checks, func(c Check) bool { return c.Name == name })
	if i < 0 {
		return Check{}, false
	}
	return v.Checks[i], true
}

// VerifyParams are Verify's inputs.
type VerifyParams struct {
	// Intent is the bound intent; Observed its transaction.
	Intent   Intent
	Observed Observed
	// SwapPrograms are the swap programs allowed at top level beside
	// BasePrograms (JupiterV6ProgramID, say).
	SwapPrograms []chain.Address
	// TransferFees holds, per Token-2022 mint with a TransferFeeConfig,
	// the fee in force in the transaction's epoch
	// (TransferFeeConfig.EpochFee); a mint absent has none.
	TransferFees map[chain.Address]token2022.TransferFee
	// BoundIntentFunc returns the intent a signature is already bound
	// to, "" when none.
	BoundIntentFunc func(signature string) (intentID string, err error)
	// ObservedAt is when the transaction was read.
	ObservedAt time.Time
}

// Verify normalizes a landed transaction against its intent (swap.md §2)
// and records each check. Effects come from the chain's record only, in
// raw atomic amounts (never UI amounts): token balances are aggregated by
// owner and mint, a missing entry counting 0, so accounts created or
// closed in the transaction and an owner changed within it are counted as
// the chain left them.
//
// Native coin: when a leg's mint is NativeMint, the wrapped account of
// the route is usually created and closed inside the transaction and has
// no balance entries, so the leg is measured on the wallet's native value
// (its lamports plus its wrapped balances): the change, plus the network
// fee when the wallet paid it, plus the rent it put into accounts created
// for it, less the rent it recovered from its accounts closed. This needs
// lamport balances; without them the balances check fails.
//
// Token-2022: the sender is debited in full, so the input is compared
// without adjustment; a receiver gets the amount less the fee withheld, so
// the fee account must gain serviceFee − fee(serviceFee) and the wallet
// at least minimum − fee(minimum), each fee at the transaction's epoch
// (VerifyParams.TransferFees).
//
// It fails only when BoundIntentFunc does (or is missing); every finding
// about the transaction is a check in the result.
func Verify(p VerifyParams) (Verification, error) {
	const op = "swap.Verify"
	it, o := p.Intent, p.Observed
	if p.BoundIntentFunc == nil {
		return Verification{}, fault.Wrap(op, errors.New("no BoundIntentFunc"))
	}
	bound := ""
	if o.Signature != "" {
		id, err := p.BoundIntentFunc(o.Signature)
		if err != nil {
			return Verification{}, fault.Wrap(op, err)
		}
		bound = id
	}
	v := Verification{
		IntentID: it.ID, OperationID: it.OperationID,
		Signature: o.Signature, Network: o.Network, Slot: o.Slot, BlockTime: o.BlockTime, ObservedAt: p.ObservedAt,
		Success: o.Err == "", Err: o.Err, BoundIntentID: bound,
		InputMint: it.InputMint, OutputMint: it.OutputMint,
		FeeRecipient: it.FeeRecipient, FeeAccount: it.FeeAccount,
		NetworkFeeLamports: o.Fee,
		InputTransferFee:   p.TransferFees[it.InputMint], OutputTransferFee: p.TransferFees[it.OutputMint],
		FeeMintTransferFee: p.TransferFees[it.FeeMint()],
	}
	record := func(name CheckName, passed bool, expected, actual string) {
		v.Checks = append(v.Checks, Check{Name: name, Passed: passed, Expected: expected, Actual: actual})
	}

	record(CheckNetwork, o.Network == it.Network, it.Network, o.Network)
	record(CheckSuccess, v.Success, "ok", okOr(o.Err))

	n := min(max(o.NumSigners, 0), len(o.Keys))
	v.Signers = slices.Clone(o.Keys[:n])
	for _, s := range v.Signers {
		if s != it.Wallet {
			v.ExtraSigners = append(v.ExtraSigners, s)
		}
	}
	record(CheckSigner, slices.Contains(v.Signers, it.Wallet), it.Wallet.String(), joinKeys(v.Signers))
	record(CheckExtraSigners, len(v.ExtraSigners) == 0, "none", joinKeys(v.ExtraSigners))
	record(CheckUniqueness, o.Signature != "" && (bound == "" || bound == it.ID), it.ID, bound)

	allowed := append(BasePrograms(), p.SwapPrograms...)
	for _, ix := range o.Instructions {
		if !slices.Contains(v.Programs, ix.ProgramID) {
			v.Programs = append(v.Programs, ix.ProgramID)
			if !slices.Contains(allowed, ix.ProgramID) {
				v.UnknownPrograms = append(v.UnknownPrograms, ix.ProgramID)
			}
		}
	}
	record(CheckPrograms, len(o.Instructions) > 0 && len(v.UnknownPrograms) == 0, "allowed", joinKeys(v.UnknownPrograms))

	b := readBalances(o)
	tokenOK := true
	var wrongProgram []chain.Address
	for _, e := range b.entries {
		var want chain.Address
		switch e.Mint {
		case it.InputMint:
			want = it.InputTokenProgram
		case it.OutputMint:
			want = it.OutputTokenProgram
		default:
			continue
		}
		// A zero ProgramID is an entry from a node that did not report it.
		if !e.ProgramID.IsZero() && e.ProgramID != want && !slices.Contains(wrongProgram, e.Mint) {
			tokenOK = false
			wrongProgram = append(wrongProgram, e.Mint)
		}
	}
	record(CheckTokenPrograms, tokenOK, "registry", joinKeys(wrongProgram))

	native := NativeMint()
	mints := []chain.Address{it.InputMint, it.OutputMint, it.FeeMint()}
	if it.InputMint == native || it.OutputMint == native {
		mints = append(mints, native)
	}
	for _, h := range b.holdingsOf(it.Wallet) {
		if !b.delta[h].IsZero() && !slices.Contains(mints, h.mint) && !slices.Contains(v.OtherMints, h.mint) {
			v.OtherMints = append(v.OtherMints, h.mint)
		}
	}
	record(CheckMints, len(v.OtherMints) == 0, "intent mints", joinKeys(v.OtherMints))

	nat := b.native(it.Wallet, o, native)
	needNative := it.InputMint == native || it.OutputMint == native
	v.LamportBalances = nat.known
	switch {
	case !nat.known:
		v.LamportsSpent = nat.payerFee
	case needNative:
		v.LamportsSpent = nat.costs
	default:
		v.LamportsSpent = neg(add(nat.lamportDelta, nat.wrappedDelta))
	}
	missing := b.unresolved > 0 || (needNative && !nat.known)
	record(CheckBalances, !missing, "complete", pick(missing, "missing", "complete"))

	feeInInput := it.FeeMint() == it.InputMint
	if it.InputMint == native {
		v.InputDebited = neg(nat.net)
	} else {
		v.InputDebited = neg(b.delta[holding{it.Wallet, it.InputMint}])
	}
	wantInput := money.SumOf(it.ExecutableInputAtomic)
	v.ExecutableInput = v.InputDebited
	if feeInInput {
		wantInput = add(wantInput, money.SumOf(it.ServiceFeeAtomic))
		v.ExecutableInput = sub(v.InputDebited, money.SumOf(it.ServiceFeeAtomic))
	}
	record(CheckExecutableInput, v.InputDebited.Cmp(wantInput) == 0, wantInput.String(), v.InputDebited.String())

	feeOK, received := b.feeAccount(it, o, native)
	v.FeeReceived = received
	record(CheckFeeRecipient, feeOK, it.FeeRecipient.String()+"/"+it.FeeMint().String(), pick(feeOK, "match", "mismatch"))
	wantFee := money.SumOf(netOf(it.ServiceFeeAtomic, v.FeeMintTransferFee))
	record(CheckServiceFee, v.FeeReceived.Cmp(wantFee) == 0, wantFee.String(), v.FeeReceived.String())

	if it.OutputMint == native {
		v.OutputReceived = nat.net
	} else {
		v.OutputReceived = b.delta[holding{it.Wallet, it.OutputMint}]
	}
	v.RequiredOutput = netOf(it.MinimumOutputAtomic, v.OutputTransferFee)
	record(CheckMinimumOutput, v.OutputReceived.Cmp(money.SumOf(v.RequiredOutput)) >= 0,
		v.RequiredOutput.String(), v.OutputReceived.String())
	return v, nil
}

// holding is one owner's position in one mint.
type holding struct{ owner, mint chain.Address }

// balances are a transaction's token balances, indexed.
type balances struct {
	// entries are every pre and post entry.
	entries []chain.TokenBalance
	// delta is Σpost − Σpre per owner and mint.
	delta map[holding]money.Sum
	// order lists the holdings in order of first appearance.
	order []holding
	// pre and post index the entries by account.
	pre, post map[chain.Address]chain.TokenBalance
	// unresolved counts entries whose account could not be resolved.
	unresolved int
}

// readBalances aggregates o's token balances by owner and mint.
func readBalances(o Observed) balances {
	b := balances{delta: map[holding]money.Sum{}, pre: map[chain.Address]chain.TokenBalance{}, post: map[chain.Address]chain.TokenBalance{}}
	apply := func(list []chain.TokenBalance, into map[chain.Address]chain.TokenBalance, sign int) {
		for _, e := range list {
			b.entries = append(b.entries, e)
			h := holding{e.Owner, e.Mint}
			if _, ok := b.delta[h]; !ok {
				b.order = append(b.order, h)
			}
			if sign < 0 {
				b.delta[h] = sub(b.delta[h], money.SumOf(money.Atomic(e.Amount)))
			} else {
				b.delta[h] = add(b.delta[h], money.SumOf(money.Atomic(e.Amount)))
			}
			acct := e.Account
			if acct.IsZero() {
				if e.AccountIndex < 0 || e.AccountIndex >= len(o.Keys) {
					b.unresolved++
					continue
				}
				acct = o.Keys[e.AccountIndex]
			}
			into[acct] = e
		}
	}
	apply(o.PreTokenBalances, b.pre, -1)
	apply(o.PostTokenBalances, b.post, +1)
	return b
}

// holdingsOf returns owner's holdings in order of first appearance.
func (b balances) holdingsOf(owner chain.Address) []holding {
	var out []holding
	for _, h := range b.order {
		if h.owner == owner {
			out = append(out, h)
		}
	}
	return out
}

// nativeValue is the wallet's native-coin accounting of a transaction.
type nativeValue struct {
	// known is false when lamport balances are missing or do not cover
	// the keys, or the wallet is not among them.
	known bool
	// lamportDelta is the wallet's lamport change; wrappedDelta its
	// wrapped balances' change.
	lamportDelta, wrappedDelta money.Sum
	// payerFee is meta.fee when the wallet paid it, else 0.
	payerFee money.Sum
	// costs is payerFee + rent funded − rent recovered.
	costs money.Sum
	// net is the swap's own effect on the wallet's native value:
	// lamportDelta + wrappedDelta + costs.
	net money.Sum
}

// native measures the wallet's native value around o.
func (b balances) native(wallet chain.Address, o Observed, nativeMint chain.Address) nativeValue {
	var nv nativeValue
	if len(o.Keys) > 0 && o.Keys[0] == wallet {
		nv.payerFee = money.SumOf(money.Atomic(o.Fee))
	}
	nv.wrappedDelta = b.delta[holding{wallet, nativeMint}]
	w := slices.Index(o.Keys, wallet)
	if w < 0 || len(o.PreBalances) != len(o.Keys) || len(o.PostBalances) != len(o.Keys) {
		nv.costs = nv.payerFee
		return nv
	}
	nv.known = true
	lamports := func(v uint64) money.Sum { return money.SumOf(money.Atomic(v)) }
	nv.lamportDelta = sub(lamports(o.PostBalances[w]), lamports(o.PreBalances[w]))
	// rent is an account's lamports less the wrapped coin it holds.
	rent := func(lam uint64, e chain.TokenBalance) money.Sum {
		r := lamports(lam)
		if e.Mint == nativeMint {
			r = sub(r, lamports(e.Amount))
		}
		return r
	}
	nv.costs = nv.payerFee
	for k, key := range o.Keys {
		if k == w {
			continue
		}
		pre, post := o.PreBalances[k], o.PostBalances[k]
		if e, ok := b.post[key]; ok && pre == 0 && post > 0 && e.Owner == wallet {
			nv.costs = add(nv.costs, rent(post, e))
		}
		if e, ok := b.pre[key]; ok && pre > 0 && post == 0 && e.Owner == wallet {
			nv.costs = sub(nv.costs, rent(pre, e))
		}
	}
	nv.net = add(add(nv.lamportDelta, nv.wrappedDelta), nv.costs)
	return nv
}

// feeAccount returns whether the intent's fee account is the fee
// recipient's account of the fee mint in every entry the transaction
// reports, and what it gained. With no entries it passes only for a zero
// fee, or, for a fee in the native coin paid to the recipient itself, by
// the recipient's lamports.
func (b balances) feeAccount(it Intent, o Observed, nativeMint chain.Address) (bool, money.Sum) {
	pre, hasPre := b.pre[it.FeeAccount]
	post, hasPost := b.post[it.FeeAccount]
	if !hasPre && !hasPost {
		k := slices.Index(o.Keys, it.FeeAccount)
		if it.FeeMint() == nativeMint && it.FeeAccount == it.FeeRecipient && k >= 0 &&
			len(o.PreBalances) == len(o.Keys) && len(o.PostBalances) == len(o.Keys) {
			return true, sub(money.SumOf(money.Atomic(o.PostBalances[k])), money.SumOf(money.Atomic(o.PreBalances[k])))
		}
		return it.ServiceFeeAtomic == 0, money.Sum{}
	}
	ok := true
	var got money.Sum
	if hasPre {
		ok = ok && pre.Owner == it.FeeRecipient && pre.Mint == it.FeeMint()
		got = sub(got, money.SumOf(money.Atomic(pre.Amount)))
	}
	if hasPost {
		ok = ok && post.Owner == it.FeeRecipient && post.Mint == it.FeeMint()
		got = add(got, money.SumOf(money.Atomic(post.Amount)))
	}
	return ok, got
}

// add returns a + b. Sums here add at most a few hundred u64 values (a
// transaction has at most 256 keys), far inside 128 bits, so the overflow
// error cannot occur.
func add(a, b money.Sum) money.Sum {
	s, _ := a.Add(b)
	return s
}

// sub returns a − b, under add's bound.
func sub(a, b money.Sum) money.Sum {
	s, _ := a.Sub(b)
	return s
}

// neg returns −a, under add's bound.
func neg(a money.Sum) money.Sum { return sub(money.Sum{}, a) }

// netOf returns what a receiver gets of a Token-2022 transfer of amount
// under fee: amount less the fee withheld, never below zero.
func netOf(amount money.Atomic, fee token2022.TransferFee) money.Atomic {
	w := money.Atomic(fee.Fee(uint64(amount)))
	if w > amount {
		return 0
	}
	return amount - w
}

// pick returns a when cond holds, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// okOr returns "ok" for an empty error.
func okOr(err string) string {
	if err == "" {
		return "ok"
	}
	return err
}

// joinKeys renders keys comma-separated.
func joinKeys(keys []chain.Address) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ","
		}
		s += k.String()
	}
	return s
}
