package jupiter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// MaxSlippageBps is the largest slippage the wire takes (100%).
const MaxSlippageBps = 10000

// SwapModeExactIn is the only swap mode the adapter asks for: the amount
// is the input, and otherAmountThreshold the minimum output.
const SwapModeExactIn = "ExactIn"

// QuoteRequest is a GET /quote (ExactIn).
type QuoteRequest struct {
	// InputMint and OutputMint are the mints' base58 addresses. Required.
	InputMint, OutputMint string
	// Amount is the input in atomic units. Required (non-zero).
	Amount uint64
	// SlippageBps is the tolerated slippage on the output, 0 to 10000. It
	// is always sent, so zero means zero and not the server's default.
	SlippageBps uint16
	// OnlyDirectRoutes asks for single-hop routes only.
	OnlyDirectRoutes bool
	// RestrictIntermediateTokens, when set, is sent as
	// restrictIntermediateTokens (the server's default is true).
	RestrictIntermediateTokens *bool
	// Dexes and ExcludeDexes are venue labels to use only or to avoid; at
	// most one of them may be set.
	Dexes, ExcludeDexes []string
	// MaxAccounts, when non-zero, caps the route's accounts (rough).
	MaxAccounts uint16
	// PlatformFeeBps, when non-zero, asks for a Jupiter platform fee
	// (swap.md §1.7).
	PlatformFeeBps uint16
	// InstructionVersion, when set, is "V1" or "V2" (V2 is needed for
	// Token-2022 fee mints).
	InstructionVersion string
}

// Quote is a quote as the aggregator sent it: the raw bytes, kept to be
// posted back as they are, and the fields the platform reads from them.
type Quote struct {
	// Raw is the answer's body exactly as received, never re-serialized;
	// SwapInstructions posts it back byte for byte. Fields the adapter does
	// not read (undocumented ones included) live only here.
	Raw json.RawMessage
	// Hash is the lowercase hex SHA-256 of Raw.
	Hash string
	// RequestID is the answer's x-api-gateway-request-id, "" when absent
	// (and always "" from ParseQuote).
	RequestID string
	// InputMint and OutputMint echo the request.
	InputMint, OutputMint string
	// InAmount is the input; OutAmount the best output after venue and
	// platform fees, before slippage; OtherAmountThreshold the minimum
	// output after slippage. All atomic.
	InAmount, OutAmount, OtherAmountThreshold uint64
	// SwapMode is "ExactIn" ("" when an answer omits it, as V2 does).
	SwapMode string
	// SlippageBps is the slippage the quote was made with.
	SlippageBps uint16
	// PlatformFee is the Jupiter platform fee, nil when none.
	PlatformFee *PlatformFee
	// PriceImpactPct is the priceImpactPct decimal string as received (a
	// fraction: "0.01" is 1%).
	PriceImpactPct string
	// PriceImpactBps is round(PriceImpactPct × 10000), half away from
	// zero (swap.md §3). It is negative when the aggregator reports a
	// price improvement.
	PriceImpactBps int64
	// RoutePlan is the route's steps in order.
	RoutePlan []RouteStep
	// ContextSlot is the slot the quote was computed at (0 when absent).
	ContextSlot uint64
	// InstructionVersion is the answer's instructionVersion, "" when null
	// or absent.
	InstructionVersion string
}

// PlatformFee is a quote's platformFee.
type PlatformFee struct {
	// Amount is the fee in atomic units of the fee mint.
	Amount uint64
	// FeeBps is the fee rate.
	FeeBps uint16
}

// RouteStep is one entry of a quote's routePlan.
type RouteStep struct {
	// AmmKey is the venue's pool (or a pseudo key such as DynamicSwap's).
	AmmKey string
	// Label is the venue's label.
	Label string
	// InputMint and OutputMint are the step's mints.
	InputMint, OutputMint string
	// InAmount and OutAmount are the step's amounts, atomic.
	InAmount, OutAmount uint64
	// Percent is the share of the input in percent; nil when null (V2
	// routing) or absent.
	Percent *uint8
	// Bps is the share in basis points (10000 = all); when an answer has
	// only percent it is percent × 100.
	Bps uint16
}

// Quote asks GET /quote for an ExactIn quote. The answer must echo the
// request's mints, amount and slippage and be ExactIn; see the package doc
// for the errors.
func (c *Client) Quote(ctx context.Context, r QuoteRequest) (Quote, error) {
	const op = "jupiter.Quote"
	q, err := c.quoteQuery(op, r)
	if err != nil {
		return Quote{}, err
	}
	a, err := c.call(ctx, op, http.MethodGet, "/quote", q, nil)
	if err != nil {
		return Quote{}, err
	}
	quote, err := parseQuote(op, a.body)
	if err != nil {
		return Quote{}, err
	}
	quote.RequestID = a.requestID
	mismatch := func(field string) error {
		return unavailable(op, ReasonQuoteMismatch, "The swap aggregator answered another request.", true,
			fmt.Errorf("%s differs from the request", field)).With("field", field)
	}
	switch {
	case quote.InputMint != r.InputMint:
		return Quote{}, mismatch("inputMint")
	case quote.OutputMint != r.OutputMint:
		return Quote{}, mismatch("outputMint")
	case quote.InAmount != r.Amount:
		return Quote{}, mismatch("inAmount")
	case quote.SlippageBps != r.SlippageBps:
		return Quote{}, mismatch("slippageBps")
	}
	return quote, nil
}

// quoteQuery validates r and builds its query.
func (c *Client) quoteQuery(op string, r QuoteRequest) (url.Values, error) {
	if _, err := token2022.ParsePublicKey(r.InputMint); err != nil {
		return nil, fault.Invalid(op, "inputMint", "The input mint is not a base58 address.")
	}
	if _, err := token2022.ParsePublicKey(r.OutputMint); err != nil {
		return nil, fault.Invalid(op, "outputMint", "The output mint is not a base58 address.")
	}
	if r.Amount == 0 {
		return nil, fault.Invalid(op, "amount", "The amount must be positive.")
	}
	if r.SlippageBps > MaxSlippageBps {
		return nil, fault.Invalid(op, "slippageBps", "The slippage must be at most 10000 bps.").With("limit", MaxSlippageBps)
	}
	if len(r.Dexes) > 0 && len(r.ExcludeDexes) > 0 {
		return nil, fault.Invalid(op, "dexes", "Dexes and excludeDexes are exclusive.")
	}
	if r.InstructionVersion != "" && r.InstructionVersion != "V1" && r.InstructionVersion != "V2" {
		return nil, fault.Invalid(op, "instructionVersion", "The instruction version must be V1 or V2.")
	}
	q := url.Values{}
	q.Set("inputMint", r.InputMint)
	q.Set("outputMint", r.OutputMint)
	q.Set("amount", strconv.FormatUint(r.Amount, 10))
	q.Set("slippageBps", strconv.FormatUint(uint64(r.SlippageBps), 10))
	if c.version == V1 {
		q.Set("swapMode", SwapModeExactIn)
	}
	if r.OnlyDirectRoutes {
		q.Set("onlyDirectRoutes", "true")
	}
	if r.RestrictIntermediateTokens != nil {
		q.Set("restrictIntermediateTokens", strconv.FormatBool(*r.RestrictIntermediateTokens))
	}
	if len(r.Dexes) > 0 {
		q.Set("dexes", strings.Join(r.Dexes, ","))
	}
	if len(r.ExcludeDexes) > 0 {
		q.Set("excludeDexes", strings.Join(r.ExcludeDexes, ","))
	}
	if r.MaxAccounts > 0 {
		q.Set("maxAccounts", strconv.FormatUint(uint64(r.MaxAccounts), 10))
	}
	if r.PlatformFeeBps > 0 {
		q.Set("platformFeeBps", strconv.FormatUint(uint64(r.PlatformFeeBps), 10))
	}
	if r.InstructionVersion != "" {
		q.Set("instructionVersion", r.InstructionVersion)
	}
	return q, nil
}

// wireQuote is the QuoteResponse (swap.md §1.4). Strings stay strings and
// numbers raw tokens, so every amount is checked as the text received.
type wireQuote struct {
	InputMint            *string          `json:"inputMint"`
	InAmount             *string          `json:"inAmount"`
	OutputMint           *string          `json:"outputMint"`
	OutAmount            *string          `json:"outAmount"`
	OtherAmountThreshold *string          `json:"otherAmountThreshold"`
	SwapMode             *string          `json:"swapMode"`
	SlippageBps          *json.RawMessage `json:"slippageBps"`
	PlatformFee          *wireFee         `json:"platformFee"`
	PriceImpactPct       *string          `json:"priceImpactPct"`
	RoutePlan            []wireStep       `json:"routePlan"`
	ContextSlot          *json.RawMessage `json:"contextSlot"`
	InstructionVersion   *string          `json:"instructionVersion"`
	TimeTaken            json.RawMessage  `json:"timeTaken"`
}

type wireFee struct {
	Amount *string          `json:"amount"`
	FeeBps *json.RawMessage `json:"feeBps"`
}

type wireStep struct {
	SwapInfo *struct {
		AmmKey     *string `json:"ammKey"`
		Label      *string `json:"label"`
		InputMint  *string `json:"inputMint"`
		OutputMint *string `json:"outputMint"`
		InAmount   *string `json:"inAmount"`
		OutAmount  *string `json:"outAmount"`
	} `json:"swapInfo"`
	Percent *json.RawMessage `json:"percent"`
	Bps     *json.RawMessage `json:"bps"`
}

// ParseQuote reads a quote's raw bytes (a stored Quote.Raw, say) as Quote
// does an answer, without the checks against a request. raw is copied.
func ParseQuote(raw []byte) (Quote, error) {
	return parseQuote("jupiter.ParseQuote", raw)
}

func parseQuote(op string, raw []byte) (Quote, error) {
	var w wireQuote
	if err := decodeObject(raw, &w); err != nil {
		return Quote{}, malformed(op, "quote", err)
	}
	q := Quote{Raw: append(json.RawMessage(nil), raw...)}
	sum := sha256.Sum256(raw)
	q.Hash = hex.EncodeToString(sum[:])
	var err error
	if q.InputMint, err = mintField(w.InputMint); err != nil {
		return Quote{}, malformed(op, "inputMint", err)
	}
	if q.OutputMint, err = mintField(w.OutputMint); err != nil {
		return Quote{}, malformed(op, "outputMint", err)
	}
	if q.InAmount, err = u64String(w.InAmount); err != nil {
		return Quote{}, malformed(op, "inAmount", err)
	}
	if q.OutAmount, err = u64String(w.OutAmount); err != nil {
		return Quote{}, malformed(op, "outAmount", err)
	}
	if q.OtherAmountThreshold, err = u64String(w.OtherAmountThreshold); err != nil {
		return Quote{}, malformed(op, "otherAmountThreshold", err)
	}
	if w.SwapMode != nil {
		q.SwapMode = *w.SwapMode
		if q.SwapMode != SwapModeExactIn {
			return Quote{}, malformed(op, "swapMode", fmt.Errorf("%q is not ExactIn", clip(q.SwapMode, 20)))
		}
	}
	if q.OtherAmountThreshold > q.OutAmount {
		return Quote{}, malformed(op, "otherAmountThreshold", errors.New("above outAmount"))
	}
	if w.SlippageBps == nil {
		return Quote{}, malformed(op, "slippageBps", errors.New("missing"))
	}
	s, err := u64Number(*w.SlippageBps, MaxSlippageBps)
	if err != nil {
		return Quote{}, malformed(op, "slippageBps", err)
	}
	q.SlippageBps = uint16(s)
	if w.PlatformFee != nil {
		var pf PlatformFee
		if pf.Amount, err = u64String(w.PlatformFee.Amount); err != nil {
			return Quote{}, malformed(op, "platformFee.amount", err)
		}
		if w.PlatformFee.FeeBps == nil {
			return Quote{}, malformed(op, "platformFee.feeBps", errors.New("missing"))
		}
		b, err := u64Number(*w.PlatformFee.FeeBps, MaxSlippageBps)
		if err != nil {
			return Quote{}, malformed(op, "platformFee.feeBps", err)
		}
		pf.FeeBps = uint16(b)
		q.PlatformFee = &pf
	}
	if w.PriceImpactPct == nil {
		return Quote{}, malformed(op, "priceImpactPct", errors.New("missing"))
	}
	q.PriceImpactPct = *w.PriceImpactPct
	if q.PriceImpactBps, err = ImpactBps(q.PriceImpactPct); err != nil {
		return Quote{}, malformed(op, "priceImpactPct", err)
	}
	if len(w.RoutePlan) == 0 {
		return Quote{}, malformed(op, "routePlan", errors.New("empty"))
	}
	q.RoutePlan = make([]RouteStep, len(w.RoutePlan))
	for i, ws := range w.RoutePlan {
		st, field, err := parseStep(ws)
		if err != nil {
			return Quote{}, malformed(op, fmt.Sprintf("routePlan[%d]%s", i, field), err)
		}
		q.RoutePlan[i] = st
	}
	if w.ContextSlot != nil {
		if q.ContextSlot, err = u64Number(*w.ContextSlot, ^uint64(0)); err != nil {
			return Quote{}, malformed(op, "contextSlot", err)
		}
	}
	if w.InstructionVersion != nil {
		q.InstructionVersion = *w.InstructionVersion
	}
	return q, nil
}

// parseStep reads one routePlan entry; field is the failing sub-path.
func parseStep(ws wireStep) (RouteStep, string, error) {
	var st RouteStep
	si := ws.SwapInfo
	if si == nil {
		return st, ".swapInfo", errors.New("missing")
	}
	if si.AmmKey == nil || *si.AmmKey == "" {
		return st, ".swapInfo.ammKey", errors.New("missing")
	}
	st.AmmKey = *si.AmmKey
	if si.Label != nil {
		st.Label = *si.Label
	}
	var err error
	if st.InputMint, err = mintField(si.InputMint); err != nil {
		return st, ".swapInfo.inputMint", err
	}
	if st.OutputMint, err = mintField(si.OutputMint); err != nil {
		return st, ".swapInfo.outputMint", err
	}
	if st.InAmount, err = u64String(si.InAmount); err != nil {
		return st, ".swapInfo.inAmount", err
	}
	if st.OutAmount, err = u64String(si.OutAmount); err != nil {
		return st, ".swapInfo.outAmount", err
	}
	if ws.Percent != nil {
		p, err := u64Number(*ws.Percent, 100)
		if err != nil {
			return st, ".percent", err
		}
		pp := uint8(p)
		st.Percent = &pp
	}
	switch {
	case ws.Bps != nil:
		b, err := u64Number(*ws.Bps, 10000)
		if err != nil {
			return st, ".bps", err
		}
		st.Bps = uint16(b)
	case st.Percent != nil:
		st.Bps = uint16(*st.Percent) * 100
	default:
		return st, ".bps", errors.New("neither bps nor percent")
	}
	if st.Bps == 0 {
		return st, ".bps", errors.New("zero share")
	}
	return st, "", nil
}

// decodeObject decodes one JSON object into v; it refuses anything else.
func decodeObject(raw []byte, v any) error {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimLeft(raw[d.InputOffset():], " \t\r\n")) > 0 {
		return errors.New("trailing data after the object")
	}
	return nil
}

// mintField checks a required base58 address string.
func mintField(s *string) (string, error) {
	if s == nil {
		return "", errors.New("missing")
	}
	if _, err := token2022.ParsePublicKey(*s); err != nil {
		return "", errors.New("not a base58 address")
	}
	return *s, nil
}

// u64String parses a required u64 string: canonical digits only, no sign,
// no leading zero, no exponent, no overflow.
func u64String(s *string) (uint64, error) {
	if s == nil {
		return 0, errors.New("missing")
	}
	a, err := money.ParseAtomic(*s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a canonical u64: %s", clip(*s, 40), reasonOf(err))
	}
	return uint64(a), nil
}

// u64Number parses a JSON number that must be a canonical integer of at
// most limit: a bare number token, not a string holding one.
func u64Number(n json.RawMessage, limit uint64) (uint64, error) {
	if len(n) > 0 && n[0] == '"' {
		return 0, fmt.Errorf("%s is a string, not a number", clip(string(n), 40))
	}
	a, err := money.ParseAtomic(string(n))
	if err != nil {
		return 0, fmt.Errorf("%s is not a canonical unsigned integer: %s", clip(string(n), 40), reasonOf(err))
	}
	if uint64(a) > limit {
		return 0, fmt.Errorf("%d is above %d", a, limit)
	}
	return uint64(a), nil
}

// reasonOf is the details.reason of a money error.
func reasonOf(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		if r, ok := fe.Details["reason"].(string); ok {
			return r
		}
	}
	return "invalid"
}

// ImpactBps converts a priceImpactPct decimal string (a fraction) to basis
// points: round(pct × 10000), half away from zero (swap.md §3). It refuses
// anything but a finite decimal of at most 64 characters (NaN, Infinity,
// hex, spaces) and a result outside int64.
func ImpactBps(pct string) (int64, error) {
	if pct == "" || len(pct) > 64 {
		return 0, errors.New("not a decimal string")
	}
	d, _, err := apd.NewFromString(pct)
	if err != nil || d.Form != apd.Finite {
		return 0, fmt.Errorf("%q is not a finite decimal", clip(pct, 64))
	}
	// 40 digits hold any int64 of bps; exponents past ±100 are refused.
	ctx := apd.Context{Precision: 40, Rounding: apd.RoundHalfUp, MaxExponent: 100, MinExponent: -100, Traps: apd.DefaultTraps}
	var r apd.Decimal
	if _, err := ctx.Mul(&r, d, apd.New(10000, 0)); err != nil {
		return 0, fmt.Errorf("%q is out of range", pct)
	}
	if _, err := ctx.Quantize(&r, &r, 0); err != nil {
		return 0, fmt.Errorf("%q is out of range", pct)
	}
	bps, err := r.Int64()
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", pct)
	}
	return bps, nil
}
