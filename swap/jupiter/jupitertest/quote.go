package jupitertest

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/internal/simctl"
)

// quoteJSON is a QuoteResponse in Jupiter's field order.
type quoteJSON struct {
	InputMint            string          `json:"inputMint"`
	InAmount             string          `json:"inAmount"`
	OutputMint           string          `json:"outputMint"`
	OutAmount            string          `json:"outAmount"`
	OtherAmountThreshold string          `json:"otherAmountThreshold"`
	SwapMode             string          `json:"swapMode,omitempty"`
	SlippageBps          uint16          `json:"slippageBps"`
	PlatformFee          *struct{}       `json:"platformFee"`
	PriceImpactPct       string          `json:"priceImpactPct"`
	RoutePlan            []stepJSON      `json:"routePlan"`
	ContextSlot          uint64          `json:"contextSlot"`
	TimeTaken            json.Number     `json:"timeTaken"`
	SwapUsdValue         string          `json:"swapUsdValue,omitempty"`
	SimplerRouteUsed     *bool           `json:"simplerRouteUsed,omitempty"`
	MostReliableAmms     json.RawMessage `json:"mostReliableAmmsQuoteReport,omitempty"`
}

type stepJSON struct {
	SwapInfo swapInfoJSON `json:"swapInfo"`
	Percent  *int         `json:"percent"`
	Bps      int          `json:"bps"`
}

type swapInfoJSON struct {
	AmmKey     string          `json:"ammKey"`
	Label      string          `json:"label"`
	InputMint  string          `json:"inputMint"`
	OutputMint string          `json:"outputMint"`
	InAmount   string          `json:"inAmount"`
	OutAmount  string          `json:"outAmount"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// contentKey identifies a quote by what it says, so that a re-serialized
// copy of an issued quote is recognised.
func contentKey(inMint, outMint, inAmount, outAmount, slippage, slot string) string {
	return strings.Join([]string{inMint, outMint, inAmount, outAmount, slippage, slot}, "|")
}

// handleQuote serves GET /quote: ExactIn over the best pool of the pair.
func (s *Server) handleQuote(w http.ResponseWriter, r *http.Request, p plan) {
	q := r.URL.Query()
	in, err := token2022.ParsePublicKey(q.Get("inputMint"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "Query parameter inputMint cannot be parsed: invalid public key")
		return
	}
	out, err := token2022.ParsePublicKey(q.Get("outputMint"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "Query parameter outputMint cannot be parsed: invalid public key")
		return
	}
	amount, err := strconv.ParseUint(q.Get("amount"), 10, 64)
	if err != nil || amount == 0 {
		writeError(w, http.StatusBadRequest, "", "Query parameter amount must be a positive u64")
		return
	}
	slippage := uint64(50)
	if v := q.Get("slippageBps"); v != "" {
		if slippage, err = strconv.ParseUint(v, 10, 16); err != nil || slippage > bpsDenominator {
			writeError(w, http.StatusBadRequest, "", "Query parameter slippageBps must be between 0 and 10000")
			return
		}
	}
	if m := q.Get("swapMode"); m != "" && m != "ExactIn" {
		writeError(w, http.StatusBadRequest, "NOT_SUPPORTED", "Only ExactIn is supported by this venue")
		return
	}
	if v := q.Get("platformFeeBps"); v != "" && v != "0" {
		writeError(w, http.StatusBadRequest, "", "platformFeeBps is not supported by the loopback aggregator")
		return
	}
	if in == out {
		writeError(w, http.StatusBadRequest, "CIRCULAR_ARBITRAGE_IS_DISABLED", "Circular arbitrage is disabled")
		return
	}
	if !s.labelAllowed(q.Get("dexes"), q.Get("excludeDexes")) {
		writeError(w, http.StatusBadRequest, "COULD_NOT_FIND_ANY_ROUTE", "Could not find any route")
		return
	}
	best, found, err := s.bestPool(r, in, out, amount)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "Failed to read the pools: "+err.Error())
		return
	}
	if !found || best.out == 0 {
		writeError(w, http.StatusBadRequest, "COULD_NOT_FIND_ANY_ROUTE", "Could not find any route")
		return
	}
	body := quoteJSON{
		InputMint: in.String(), InAmount: strconv.FormatUint(amount, 10),
		OutputMint: out.String(), OutAmount: strconv.FormatUint(best.out, 10),
		OtherAmountThreshold: strconv.FormatUint(Threshold(best.out, uint16(slippage)), 10),
		SwapMode:             "ExactIn", SlippageBps: uint16(slippage), PriceImpactPct: best.impact,
		ContextSlot: best.slot, TimeTaken: "0.001",
	}
	step := stepJSON{Bps: bpsDenominator, SwapInfo: swapInfoJSON{AmmKey: best.pool.Address.String(), Label: s.cfg.Label,
		InputMint: in.String(), OutputMint: out.String(), InAmount: body.InAmount, OutAmount: body.OutAmount}}
	if s.cfg.V2 {
		body.SwapMode = ""
	} else {
		hundred := 100
		step.Percent = &hundred
	}
	if p.dynamicSwap {
		// Undocumented fields, as Jupiter's answers carry them; the text
		// holds <, > and & so that a client that re-encodes the quote with
		// encoding/json's defaults changes its bytes.
		step.SwapInfo.Details = json.RawMessage(`{"dynamicSwapV2":{"version":2,"venue":"<loopback> & co","routeData":"` +
			simctl.RandomHex(16) + `"}}`)
		body.SwapUsdValue = "12.34"
		used := false
		body.SimplerRouteUsed = &used
		body.MostReliableAmms = json.RawMessage(`{"info":{"` + best.pool.Address.String() + `":"` + body.OutAmount + `"}}`)
	}
	body.RoutePlan = []stepJSON{step}
	raw, err := marshal(body)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "Failed to encode the quote")
		return
	}
	s.remember(&issued{hash: sha256.Sum256(raw),
		key:  contentKey(body.InputMint, body.OutputMint, body.InAmount, body.OutAmount, strconv.FormatUint(slippage, 10), strconv.FormatUint(best.slot, 10)),
		pool: best.pool, side: best.side, inAmount: amount, outAmount: best.out, slippageBps: uint16(slippage), dynamic: p.dynamicSwap})
	writeJSON(w, raw)
}

// labelAllowed applies the dexes and excludeDexes filters to the pools'
// one label.
func (s *Server) labelAllowed(dexes, exclude string) bool {
	has := func(list string) bool {
		for _, l := range strings.Split(list, ",") {
			if strings.TrimSpace(l) == s.cfg.Label {
				return true
			}
		}
		return false
	}
	if dexes != "" && !has(dexes) {
		return false
	}
	return exclude == "" || !has(exclude)
}

// bestPool prices amount through every pool of the pair and returns the
// one with the largest output (the first added on a tie).
func (s *Server) bestPool(r *http.Request, in, out chain.Address, amount uint64) (priced, bool, error) {
	var best priced
	found := false
	for _, pl := range s.poolList() {
		acct, err := s.cluster.GetAccountInfo(r.Context(), pl.addr, chain.Processed)
		if err != nil {
			return priced{}, false, err
		}
		p, err := chaintest.DecodePool(pl.addr, acct.Data)
		if err != nil || acct.Owner != chaintest.PoolProgramID() {
			continue // the account changed under the simulator: not a pool any more
		}
		sd, ok := direction(p, in, out)
		if !ok {
			continue
		}
		pr, err := price(r.Context(), s.cluster, p, sd, amount, acct.Slot)
		if err != nil {
			return priced{}, false, err
		}
		if !found || pr.out > best.out {
			best, found = pr, true
		}
	}
	return best, found, nil
}
