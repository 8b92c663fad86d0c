package token

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// The check codes, in the spec's order of the thirteen required checks.
const (
	CheckMintExists          = "MINT_EXISTS"
	CheckProgramOwner        = "TOKEN_PROGRAM_OWNER"
	CheckDecimals            = "DECIMALS"
	CheckSupplyParses        = "SUPPLY_PARSES"
	CheckSupplyWithinMaximum = "SUPPLY_WITHIN_MAXIMUM"
	CheckAuthorityState      = "AUTHORITY_STATE"
	CheckFeeBps              = "TRANSFER_FEE_BPS"
	CheckFeeCap              = "TRANSFER_FEE_POLICY_CAP_BPS"
	CheckMaximumFee          = "MAXIMUM_FEE_AMOUNT"
	CheckFeeConfigAuthority  = "FEE_CONFIG_AUTHORITY"
	CheckWithdrawAuthority   = "WITHDRAW_WITHHELD_AUTHORITY"
	CheckMetadataAuthority   = "METADATA_AUTHORITY"
	CheckProvenance          = "PROVENANCE"
)

// Checks lists the check codes in the order Verify runs them.
func Checks() []string {
	return []string{CheckMintExists, CheckProgramOwner, CheckDecimals, CheckSupplyParses,
		CheckSupplyWithinMaximum, CheckAuthorityState, CheckFeeBps, CheckFeeCap, CheckMaximumFee,
		CheckFeeConfigAuthority, CheckWithdrawAuthority, CheckMetadataAuthority, CheckProvenance}
}

// The error codes of an ERROR run.
const (
	ErrorChainUnavailable = "CHAIN_UNAVAILABLE"
	ErrorNodeBehind       = "NODE_BEHIND"
	ErrorNetworkMismatch  = "NETWORK_MISMATCH"
	ErrorNotConfigured    = "NOT_CONFIGURED"
)

// Verify runs the thirteen checks of cfg's mint against client and returns
// the run (not stored; ID empty). now stamps the run.
func Verify(ctx context.Context, client ChainClient, cfg Config, clock Clock) Run {
	cfg = cfg.withDefaults()
	r := Run{ConfigHash: cfg.Hash(), Mint: cfg.Mint, StartedAt: clock.Now()}
	finish := func(o Outcome) Run {
		r.Outcome = o
		r.FinishedAt = clock.Now()
		return r
	}
	fail := func(code, msg string) Run {
		r.ErrorCode, r.ErrorMessage = code, msg
		r.Checks = nil
		return finish(Errored)
	}
	if !cfg.Configured() {
		return fail(ErrorNotConfigured, "no mint is configured")
	}
	if client == nil {
		return fail(ErrorChainUnavailable, "no cluster is configured for this environment")
	}
	mintKey, err := token2022.ParsePublicKey(cfg.Mint)
	if err != nil {
		return fail(ErrorNotConfigured, "the configured mint is not an address")
	}
	genesis, err := client.GetGenesisHash(ctx)
	if err != nil {
		return fail(chainError(err))
	}
	net := chain.Network{GenesisHash: genesis}
	r.Network, r.Cluster = net.CAIP2(), net.Cluster()
	if r.Cluster != cfg.Cluster {
		return fail(ErrorNetworkMismatch, "the cluster is "+string(r.Cluster)+", the registry is configured for "+string(cfg.Cluster))
	}
	epoch, err := client.GetEpochInfo(ctx, chain.Finalized)
	if err != nil {
		return fail(chainError(err))
	}
	acct, err := client.GetAccountInfo(ctx, mintKey, chain.Finalized)
	missing := errors.Is(err, chain.ErrAccountNotFound)
	if err != nil && !missing {
		return fail(chainError(err))
	}
	var blockTime *time.Time
	if !missing {
		slot := acct.Slot
		r.Slot = &slot
		bt, err := client.GetBlockTime(ctx, slot)
		switch {
		case err == nil:
			bt = bt.UTC()
			blockTime = &bt
		case errors.Is(err, chain.ErrBlockTimeUnavailable):
		default:
			return fail(chainError(err))
		}
	}
	r.BlockTime = blockTime
	r.Checks = checks(cfg, acct, missing, epoch.Epoch, r.Slot, blockTime)
	if !missing {
		if m, err := token2022.DecodeMint(acct.Data); err == nil && m.IsInitialized {
			s := m.Supply
			r.Supply = &s
		}
	}
	for _, c := range r.Checks {
		if c.Required && !c.Passed {
			return finish(Failed)
		}
	}
	return finish(Passed)
}

// chainError maps a read failure to an ERROR run's code and a safe message
// (an adapter's errors never carry the RPC URL).
func chainError(err error) (string, string) {
	var rpc *chain.RPCError
	if errors.As(err, &rpc) && rpc.Unhealthy() {
		msg := "the node is behind"
		if rpc.NumSlotsBehind != nil {
			msg += " by " + strconv.FormatUint(*rpc.NumSlotsBehind, 10) + " slots"
		}
		return ErrorNodeBehind, msg
	}
	if errors.As(err, &rpc) {
		return ErrorChainUnavailable, "the node answered error " + strconv.Itoa(rpc.Code) + " to " + rpc.Method
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrorChainUnavailable, "the cluster did not answer in time"
	}
	return ErrorChainUnavailable, "the cluster could not be reached"
}

// authority renders an optional authority: its address, or nil for none.
func authority(k *token2022.PublicKey) any {
	if k == nil || k.IsZero() {
		return nil
	}
	return k.String()
}

// optional renders a configured authority: the address, or nil for none.
func optional(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// checks evaluates the thirteen checks. A check that cannot be evaluated
// because an earlier one failed fails with actual nil and a reason.
func checks(cfg Config, acct chain.AccountInfo, missing bool, epoch uint64, slot *uint64, blockTime *time.Time) []Check {
	out := make([]Check, 0, 13)
	add := func(c Check) { c.Required = true; out = append(out, c) }
	add(Check{Code: CheckMintExists, Passed: !missing, Actual: !missing, Expected: true,
		Reason: reasonIf(missing, "no account exists at the configured mint address")})
	if missing {
		for _, code := range Checks()[1:] {
			out = append(out, Check{Code: code, Required: code != CheckMetadataAuthority || cfg.MetadataAuthority != "",
				Reason: "the mint account does not exist"})
		}
		return out
	}
	program := token2022.ProgramID()
	ownerOK := acct.Owner == program
	add(Check{Code: CheckProgramOwner, Passed: ownerOK, Actual: acct.Owner.String(), Expected: program.String(),
		Reason: reasonIf(!ownerOK, "the mint is not owned by the extended token program")})
	var m token2022.Mint
	var decodeErr error
	if ownerOK {
		m, decodeErr = token2022.DecodeMint(acct.Data)
		if decodeErr == nil && !m.IsInitialized {
			decodeErr = errors.New("the mint is not initialized")
		}
	} else {
		decodeErr = errors.New("the account is not a Token-2022 mint")
	}
	if decodeErr != nil {
		add(Check{Code: CheckDecimals, Expected: Decimals, Reason: decodeErr.Error()})
		add(Check{Code: CheckSupplyParses, Reason: decodeErr.Error()})
		for _, code := range Checks()[4 : len(Checks())-1] {
			out = append(out, Check{Code: code, Required: code != CheckMetadataAuthority || cfg.MetadataAuthority != "", Reason: decodeErr.Error()})
		}
		out = append(out, provenance(slot, blockTime))
		return out
	}
	add(Check{Code: CheckDecimals, Passed: m.Decimals == Decimals, Actual: int(m.Decimals), Expected: Decimals,
		Reason: reasonIf(m.Decimals != Decimals, "the mint's decimals differ from the policy")})
	supply := strconv.FormatUint(m.Supply, 10)
	add(Check{Code: CheckSupplyParses, Passed: true, Actual: supply})
	within := m.Supply <= MaxSupplyAtomic
	add(Check{Code: CheckSupplyWithinMaximum, Passed: within, Actual: supply, ExpectedMax: strconv.FormatUint(MaxSupplyAtomic, 10),
		Reason: reasonIf(!within, "the observed supply exceeds the policy maximum")})

	wantMint, wantFreeze := optional(cfg.MintAuthority), optional(cfg.FreezeAuthority)
	gotMint, gotFreeze := authority(m.MintAuthority), authority(m.FreezeAuthority)
	authOK := gotMint == wantMint && gotFreeze == wantFreeze
	reason := ""
	if !authOK {
		reason = "the mint or freeze authority differs from the production policy"
		if cfg.FixedSupply && gotMint != nil {
			reason = "a fixed supply needs the mint authority revoked"
		}
	}
	add(Check{Code: CheckAuthorityState, Passed: authOK,
		Actual:   map[string]any{"mintAuthority": gotMint, "freezeAuthority": gotFreeze},
		Expected: map[string]any{"mintAuthority": wantMint, "freezeAuthority": wantFreeze}, Reason: reason})

	fc, hasFee := m.TransferFeeConfig()
	if !hasFee {
		for _, code := range []string{CheckFeeBps, CheckFeeCap, CheckMaximumFee, CheckFeeConfigAuthority, CheckWithdrawAuthority} {
			add(Check{Code: code, Reason: "the mint has no transfer-fee configuration"})
		}
	} else {
		active := fc.EpochFee(epoch)
		add(Check{Code: CheckFeeBps, Passed: active.BasisPoints == LaunchFeeBps, Actual: int(active.BasisPoints), Expected: LaunchFeeBps,
			Reason: reasonIf(active.BasisPoints != LaunchFeeBps, "the active fee rate differs from the launch rate")})
		// The effective rate is the active one and any scheduled newer one.
		effective := active.BasisPoints
		if fc.Newer.BasisPoints > effective {
			effective = fc.Newer.BasisPoints
		}
		add(Check{Code: CheckFeeCap, Passed: effective <= FeeCapBps, Actual: int(effective), ExpectedMax: FeeCapBps,
			Reason: reasonIf(effective > FeeCapBps, "an active or scheduled fee rate exceeds the policy cap")})
		want, _ := parseAtomic(cfg.MaximumFeeAtomic)
		maxOK := active.MaximumFee == want && fc.Newer.MaximumFee == want
		add(Check{Code: CheckMaximumFee, Passed: maxOK, Actual: strconv.FormatUint(active.MaximumFee, 10), Expected: cfg.MaximumFeeAtomic,
			Reason: reasonIf(!maxOK, "the maximum fee differs from the approved configuration")})
		gotFeeAuth := authority(&fc.ConfigAuthority)
		add(Check{Code: CheckFeeConfigAuthority, Passed: gotFeeAuth == optional(cfg.FeeConfigAuthority), Actual: gotFeeAuth,
			Expected: optional(cfg.FeeConfigAuthority), Reason: reasonIf(gotFeeAuth != optional(cfg.FeeConfigAuthority), "the fee-configuration authority differs from the registry")})
		gotWithdraw := authority(&fc.WithdrawWithheldAuthority)
		withdrawOK := gotWithdraw == optional(cfg.WithdrawWithheldAuthority)
		// Withheld fees need an authority to withdraw them; fees withheld
		// under no authority could never be handled.
		handled := fc.WithheldAmount == 0 || gotWithdraw != nil
		add(Check{Code: CheckWithdrawAuthority, Passed: withdrawOK && handled,
			Actual:   map[string]any{"withdrawWithheldAuthority": gotWithdraw, "withheldAmount": strconv.FormatUint(fc.WithheldAmount, 10)},
			Expected: map[string]any{"withdrawWithheldAuthority": optional(cfg.WithdrawWithheldAuthority)},
			Reason:   reasonIf(!withdrawOK || !handled, "the withdraw-withheld authority or withheld-fee handling differs from the registry")})
	}
	out = append(out, metadataCheck(cfg, m))
	out = append(out, provenance(slot, blockTime))
	return out
}

// metadataCheck is check 12: where the registry configures a metadata
// authority, the metadata pointer must point at the mint itself and both
// it and the embedded metadata must name that authority.
func metadataCheck(cfg Config, m token2022.Mint) Check {
	c := Check{Code: CheckMetadataAuthority, Required: cfg.MetadataAuthority != ""}
	ptr, hasPtr := m.MetadataPointer()
	md, hasMD := m.TokenMetadata()
	actual := map[string]any{"pointerAuthority": nil, "metadataAddress": nil, "updateAuthority": nil}
	if hasPtr {
		actual["pointerAuthority"] = authority(&ptr.Authority)
		actual["metadataAddress"] = authority(&ptr.MetadataAddress)
	}
	if hasMD {
		actual["updateAuthority"] = authority(&md.UpdateAuthority)
	}
	c.Actual = actual
	if cfg.MetadataAuthority == "" {
		c.Reason = "no metadata authority is configured in the registry"
		return c
	}
	c.Expected = map[string]any{"pointerAuthority": cfg.MetadataAuthority, "metadataAddress": cfg.Mint, "updateAuthority": cfg.MetadataAuthority}
	c.Passed = hasPtr && hasMD && actual["pointerAuthority"] == cfg.MetadataAuthority &&
		actual["metadataAddress"] == cfg.Mint && actual["updateAuthority"] == cfg.MetadataAuthority
	c.Reason = reasonIf(!c.Passed, "the metadata pointer or embedded metadata differs from the registry")
	return c
}

// provenance is check 13: the slot of the read is recorded, with its block
// time when the node has one.
func provenance(slot *uint64, blockTime *time.Time) Check {
	c := Check{Code: CheckProvenance, Required: true, Passed: slot != nil}
	actual := map[string]any{"slot": nil, "blockTime": nil}
	if slot != nil {
		actual["slot"] = *slot
	}
	if blockTime != nil {
		actual["blockTime"] = blockTime.Format(time.RFC3339)
	} else if slot != nil {
		c.Reason = "the node has no block time for the slot"
	}
	c.Actual = actual
	return c
}

// reasonIf returns reason when cond holds.
func reasonIf(cond bool, reason string) string {
	if cond {
		return reason
	}
	return ""
}
