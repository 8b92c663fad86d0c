package jupitertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// Program ids the answers name (chain.md §4).
var (
	computeBudgetProgram = chain.Address(solana.ComputeBudget)
	systemProgram        = chain.Address(solana.SystemProgramID)
	nativeMint           = chain.Address(solana.SolMint)
)

type accountJSON struct {
	Pubkey     string `json:"pubkey"`
	IsSigner   bool   `json:"isSigner"`
	IsWritable bool   `json:"isWritable"`
}

type ixJSON struct {
	ProgramID string        `json:"programId"`
	Accounts  []accountJSON `json:"accounts"`
	Data      string        `json:"data"`
}

type blockhashJSON struct {
	Blockhash            [32]byte `json:"blockhash"`
	LastValidBlockHeight uint64   `json:"lastValidBlockHeight"`
}

type simErrorJSON struct {
	ErrorCode string `json:"errorCode"`
	Error     string `json:"error"`
}

type prioType struct {
	ComputeBudget struct {
		MicroLamports          uint64 `json:"microLamports"`
		EstimatedMicroLamports uint64 `json:"estimatedMicroLamports"`
	} `json:"computeBudget"`
}

// instructionsJSON is a /swap-instructions answer in Jupiter's field order.
type instructionsJSON struct {
	TokenLedgerInstruction        *ixJSON             `json:"tokenLedgerInstruction"`
	ComputeBudgetInstructions     []ixJSON            `json:"computeBudgetInstructions"`
	SetupInstructions             []ixJSON            `json:"setupInstructions"`
	SwapInstruction               ixJSON              `json:"swapInstruction"`
	CleanupInstruction            *ixJSON             `json:"cleanupInstruction"`
	OtherInstructions             []ixJSON            `json:"otherInstructions"`
	AddressLookupTableAddresses   *[]string           `json:"addressLookupTableAddresses,omitempty"`
	AddressesByLookupTableAddress map[string][]string `json:"addressesByLookupTableAddress,omitempty"`
	PrioritizationFeeLamports     uint64              `json:"prioritizationFeeLamports"`
	ComputeUnitLimit              uint32              `json:"computeUnitLimit"`
	PrioritizationType            prioType            `json:"prioritizationType"`
	DynamicSlippageReport         *struct{}           `json:"dynamicSlippageReport"`
	SimulationError               *simErrorJSON       `json:"simulationError"`
	LastValidBlockHeight          *uint64             `json:"lastValidBlockHeight,omitempty"`
	BlockhashWithMetadata         *blockhashJSON      `json:"blockhashWithMetadata,omitempty"`
}

// swapRequest is the body of POST /swap-instructions as the simulator
// reads it.
type swapRequest struct {
	QuoteResponse                 json.RawMessage `json:"quoteResponse"`
	UserPublicKey                 *string         `json:"userPublicKey"`
	Taker                         *string         `json:"taker"`
	Payer                         *string         `json:"payer"`
	WrapAndUnwrapSol              *bool           `json:"wrapAndUnwrapSol"`
	DestinationTokenAccount       *string         `json:"destinationTokenAccount"`
	ComputeUnitPriceMicroLamports *uint64         `json:"computeUnitPriceMicroLamports"`
	PrioritizationFeeLamports     json.RawMessage `json:"prioritizationFeeLamports"`
}

// postedQuote is what the simulator reads of a posted quote that is not
// byte for byte one it issued.
type postedQuote struct {
	InputMint   string      `json:"inputMint"`
	InAmount    string      `json:"inAmount"`
	OutputMint  string      `json:"outputMint"`
	OutAmount   string      `json:"outAmount"`
	SlippageBps json.Number `json:"slippageBps"`
	ContextSlot json.Number `json:"contextSlot"`
	RoutePlan   []struct {
		SwapInfo map[string]json.RawMessage `json:"swapInfo"`
	} `json:"routePlan"`
}

// handleSwapInstructions serves POST /swap-instructions for a quote the
// simulator issued, posted back unaltered.
func (s *Server) handleSwapInstructions(w http.ResponseWriter, r *http.Request, p plan) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return
	}
	if len(body) > maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "", "Payload Too Large")
		return
	}
	var req swapRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "", "Failed to parse the request body as JSON")
		return
	}
	if len(req.QuoteResponse) == 0 {
		writeError(w, http.StatusBadRequest, "", "Failed to deserialize the JSON body into the target type: missing field `quoteResponse`")
		return
	}
	user := req.UserPublicKey
	if user == nil {
		user = req.Taker
	}
	if user == nil {
		writeError(w, http.StatusBadRequest, "", "Failed to deserialize the JSON body into the target type: missing field `userPublicKey`")
		return
	}
	wallet, err := token2022.ParsePublicKey(*user)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "Invalid userPublicKey")
		return
	}
	payer := wallet
	if req.Payer != nil {
		if payer, err = token2022.ParsePublicKey(*req.Payer); err != nil {
			writeError(w, http.StatusBadRequest, "", "Invalid payer")
			return
		}
	}
	q, status, msg := s.verifyQuote(req.QuoteResponse)
	if q == nil {
		writeError(w, status, "", msg)
		return
	}
	if (req.WrapAndUnwrapSol == nil || *req.WrapAndUnwrapSol) && (q.side.inMint == nativeMint || q.side.outMint == nativeMint) {
		writeError(w, http.StatusBadRequest, "NOT_SUPPORTED", "wrapAndUnwrapSol is not supported by the loopback aggregator")
		return
	}
	price, ok := s.unitPrice(req)
	if !ok {
		writeError(w, http.StatusBadRequest, "INVALID_COMPUTE_UNIT_PRICE_AND_PRIORITIZATION_FEE",
			"computeUnitPriceMicroLamports and prioritizationFeeLamports cannot be used together")
		return
	}
	ctx := r.Context()
	source := chaintest.AssociatedTokenAddress(wallet, q.side.inMint, q.side.programIn)
	dest := chaintest.AssociatedTokenAddress(wallet, q.side.outMint, q.side.programOut)
	var setup []ixJSON
	if req.DestinationTokenAccount != nil {
		if dest, err = token2022.ParsePublicKey(*req.DestinationTokenAccount); err != nil {
			writeError(w, http.StatusBadRequest, "", "Invalid destinationTokenAccount")
			return
		}
	} else {
		_, err := s.cluster.GetAccountInfo(ctx, dest, chain.Processed)
		switch {
		case errors.Is(err, chain.ErrAccountNotFound):
			setup = append(setup, createATA(payer, dest, wallet, q.side.outMint, q.side.programOut))
		case err != nil:
			writeError(w, http.StatusInternalServerError, "", "Failed to read the user's accounts")
			return
		}
	}
	swap, err := swapInstruction(q, wallet, source, dest)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "Failed to build the swap instruction")
		return
	}
	limit := s.cfg.ComputeUnitLimit
	out := instructionsJSON{
		ComputeBudgetInstructions: []ixJSON{setComputeUnitLimit(limit), setComputeUnitPrice(price)},
		SetupInstructions:         setup,
		SwapInstruction:           swap,
		OtherInstructions:         []ixJSON{},
		PrioritizationFeeLamports: priorityFee(limit, price),
		ComputeUnitLimit:          limit,
	}
	if out.SetupInstructions == nil {
		out.SetupInstructions = []ixJSON{}
	}
	out.PrioritizationType.ComputeBudget.MicroLamports = price
	out.PrioritizationType.ComputeBudget.EstimatedMicroLamports = price
	if p.simulation != nil {
		out.SimulationError = &simErrorJSON{ErrorCode: p.simulation.ErrorCode, Error: p.simulation.Message}
	}
	table := s.lookupTableOf(q.pool.Address)
	hash, lastValid := s.cluster.LatestBlockhash()
	if s.cfg.V2 {
		out.AddressesByLookupTableAddress = map[string][]string{}
		if !table.IsZero() {
			out.AddressesByLookupTableAddress[table.String()] = s.tableAddresses(ctx, table)
		}
		out.BlockhashWithMetadata = &blockhashJSON{Blockhash: [32]byte(hash), LastValidBlockHeight: lastValid}
	} else {
		tables := []string{}
		if !table.IsZero() {
			tables = append(tables, table.String())
		}
		out.AddressLookupTableAddresses = &tables
		out.LastValidBlockHeight = &lastValid
	}
	raw, err := marshal(out)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "Failed to encode the instructions")
		return
	}
	writeJSON(w, raw)
}

// verifyQuote finds the issued quote raw is, byte for byte. Otherwise it
// answers as Jupiter does: 500 for a dynamic-swap quote whose details were
// lost by re-serializing, 400 for anything else.
func (s *Server) verifyQuote(raw json.RawMessage) (*issued, int, string) {
	if q, ok := s.lookup(sha256.Sum256(raw)); ok {
		return q, 0, ""
	}
	var pq postedQuote
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&pq); err != nil {
		return nil, http.StatusBadRequest, "Failed to deserialize the JSON body into the target type: quoteResponse"
	}
	key := contentKey(pq.InputMint, pq.OutputMint, pq.InAmount, pq.OutAmount, pq.SlippageBps.String(), pq.ContextSlot.String())
	if q, ok := s.lookupContent(key); ok && q.dynamic {
		details := false
		for _, st := range pq.RoutePlan {
			_, has := st.SwapInfo["details"]
			details = details || has
		}
		if !details {
			return nil, http.StatusInternalServerError, "Dynamic swap is missing dynamic swap details"
		}
	}
	return nil, http.StatusBadRequest, "Invalid quoteResponse: the quote was altered or not issued by this server"
}

// unitPrice is the compute unit price of a request; false when it sets
// both a price and a prioritization fee.
func (s *Server) unitPrice(req swapRequest) (uint64, bool) {
	fee := bytes.TrimSpace(req.PrioritizationFeeLamports)
	hasFee := len(fee) > 0 && !bytes.Equal(fee, []byte("null"))
	if req.ComputeUnitPriceMicroLamports != nil {
		return *req.ComputeUnitPriceMicroLamports, !hasFee
	}
	if hasFee {
		var lamports uint64
		if json.Unmarshal(fee, &lamports) == nil {
			// price = lamports × 10^6 / limit, floored
			n := new(big.Int).Mul(new(big.Int).SetUint64(lamports), big.NewInt(1_000_000))
			n.Quo(n, big.NewInt(int64(s.cfg.ComputeUnitLimit)))
			if n.IsUint64() {
				return n.Uint64(), true
			}
			return ^uint64(0), true
		}
	}
	return s.cfg.ComputeUnitPrice, true // "auto", a priority level, or none
}

// priorityFee is ceil(limit × price / 10^6), capped at u64.
func priorityFee(limit uint32, price uint64) uint64 {
	n := new(big.Int).Mul(big.NewInt(int64(limit)), new(big.Int).SetUint64(price))
	n.Add(n, big.NewInt(999_999))
	n.Quo(n, big.NewInt(1_000_000))
	if !n.IsUint64() {
		return ^uint64(0)
	}
	return n.Uint64()
}

// tableAddresses reads the addresses of a lookup table on the cluster:
// none when it does not exist or is not a lookup table.
func (s *Server) tableAddresses(ctx context.Context, table chain.Address) []string {
	out := []string{}
	acct, err := s.cluster.GetAccountInfo(ctx, table, chain.Processed)
	if err != nil || acct.Owner != chaintest.LookupTableProgramID() {
		return out
	}
	t, err := message.DecodeLookupTable(table, acct.Data)
	if err != nil {
		return out
	}
	for _, a := range t.Addresses {
		out = append(out, a.String())
	}
	return out
}

// ix renders an instruction.
func ix(program chain.Address, data []byte, accounts ...accountJSON) ixJSON {
	return ixJSON{ProgramID: program.String(), Accounts: accounts, Data: base64.StdEncoding.EncodeToString(data)}
}

func meta(a chain.Address, signer, writable bool) accountJSON {
	return accountJSON{Pubkey: a.String(), IsSigner: signer, IsWritable: writable}
}

// setComputeUnitLimit is Compute Budget instruction 2 (u32 units).
func setComputeUnitLimit(units uint32) ixJSON {
	d := make([]byte, 5)
	d[0] = 2
	binary.LittleEndian.PutUint32(d[1:], units)
	return ix(computeBudgetProgram, d)
}

// setComputeUnitPrice is Compute Budget instruction 3 (u64
// micro-lamports).
func setComputeUnitPrice(microLamports uint64) ixJSON {
	d := make([]byte, 9)
	d[0] = 3
	binary.LittleEndian.PutUint64(d[1:], microLamports)
	return ix(computeBudgetProgram, d)
}

// createATA is the Associated Token Account program's CreateIdempotent
// (instruction 1).
func createATA(payer, ata, wallet, mint, tokenProgram chain.Address) ixJSON {
	return ix(token2022.AssociatedTokenProgramID(), []byte{1},
		meta(payer, true, true), meta(ata, false, true), meta(wallet, false, false), meta(mint, false, false),
		meta(systemProgram, false, false), meta(tokenProgram, false, false))
}

// swapInstruction is the pool program's route instruction for q, built by
// the program's own constructor (chaintest.PoolSwapInstruction): the
// contract's ten accounts in order and data discriminator ‖ in_amount ‖
// quoted_out_amount ‖ slippage_bps ‖ platform_fee_bps (0).
func swapInstruction(q *issued, wallet, source, dest chain.Address) (ixJSON, error) {
	in, err := chaintest.PoolSwapInstruction(chaintest.PoolSwap{Pool: q.pool, InputMint: q.side.inMint, Authority: wallet,
		Source: source, Destination: dest, InAmount: q.inAmount, QuotedOutAmount: q.outAmount, SlippageBps: q.slippageBps})
	if err != nil {
		return ixJSON{}, err
	}
	out := ixJSON{ProgramID: in.ProgramID.String(), Accounts: make([]accountJSON, 0, len(in.Accounts)),
		Data: base64.StdEncoding.EncodeToString(in.Data)}
	for _, a := range in.Accounts {
		out.Accounts = append(out.Accounts, meta(a.Key, a.Signer, a.Writable))
	}
	return out, nil
}
