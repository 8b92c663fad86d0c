package jupiter

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// SwapRequest is the body of POST /swap-instructions besides the quote.
type SwapRequest struct {
	// UserPublicKey is the wallet that signs and whose token accounts the
	// swap uses (sent as taker under V2). Required.
	UserPublicKey string
	// WrapAndUnwrapSol is always sent, so false means false: the server's
	// default is true, which wraps SOL and closes the wallet's wSOL account.
	WrapAndUnwrapSol bool
	// Payer, when set, pays the fee and rent instead of the user.
	Payer string
	// FeeAccount, when set, is the initialized token account that receives
	// the quote's platform fee.
	FeeAccount string
	// DestinationTokenAccount, when set, is a pre-initialized output
	// account used instead of the user's associated one.
	DestinationTokenAccount string
	// UseSharedAccounts, when set, is sent as useSharedAccounts.
	UseSharedAccounts *bool
	// ComputeUnitPriceMicroLamports, when non-zero, fixes the compute unit
	// price. Exclusive with PrioritizationFeeLamports.
	ComputeUnitPriceMicroLamports uint64
	// PrioritizationFeeLamports, when non-zero, is the total priority fee.
	PrioritizationFeeLamports uint64
	// DynamicComputeUnitLimit asks the server to size the compute unit
	// limit by simulation.
	DynamicComputeUnitLimit bool
	// SkipUserAccountsRPCCalls skips the server's checks of the user's
	// accounts.
	SkipUserAccountsRPCCalls bool
	// BlockhashSlotsToExpiry, when non-zero, is the transaction's validity
	// in slots.
	BlockhashSlotsToExpiry uint16
}

// Instructions is a /swap-instructions answer.
type Instructions struct {
	// Raw is the answer's body as received.
	Raw json.RawMessage
	// RequestID is the answer's x-api-gateway-request-id, "" when absent.
	RequestID string
	// ComputeBudget are the Compute Budget instructions (unit limit and
	// price), in order.
	ComputeBudget []Instruction
	// Setup are the instructions to run before the swap (associated token
	// account creation, SOL wrapping).
	Setup []Instruction
	// TokenLedger is the token ledger instruction, nil when none.
	TokenLedger *Instruction
	// Swap is the swap instruction.
	Swap Instruction
	// Cleanup is the instruction to run after the swap (unwrapping SOL),
	// nil when none.
	Cleanup *Instruction
	// Other are further instructions (a tip transfer).
	Other []Instruction
	// AddressLookupTables are the address lookup tables the transaction
	// should use: addressLookupTableAddresses, or under V2 the tables of
	// addressesByLookupTableAddress in byte order.
	AddressLookupTables []chain.Address
	// AddressesByLookupTable are V2's addressesByLookupTableAddress (each
	// table's addresses), nil when the answer has none.
	AddressesByLookupTable map[chain.Address][]chain.Address
	// Blockhash is V2's blockhashWithMetadata.blockhash in base58, "" when
	// the answer has none (V1: the caller fetches a blockhash).
	Blockhash string
	// LastValidBlockHeight is lastValidBlockHeight (or V2's
	// blockhashWithMetadata.lastValidBlockHeight); 0 when absent.
	LastValidBlockHeight uint64
	// ComputeUnitLimit is the reported compute unit limit, 0 when absent.
	ComputeUnitLimit uint32
	// PrioritizationFeeLamports is the reported priority fee, 0 when absent.
	PrioritizationFeeLamports uint64
	// ComputeUnitPriceMicroLamports is
	// prioritizationType.computeBudget.microLamports, 0 when absent.
	ComputeUnitPriceMicroLamports uint64
	// JitoTipLamports is prioritizationType.jito.lamports, 0 when absent.
	JitoTipLamports uint64
	// DynamicSlippageReport is the dynamicSlippageReport object as
	// received, nil when null or absent.
	DynamicSlippageReport json.RawMessage
}

// Instruction is one instruction of an answer.
type Instruction struct {
	// ProgramID is the program called.
	ProgramID chain.Address
	// Accounts are the instruction's accounts in order.
	Accounts []AccountMeta
	// Data is the instruction data, decoded from base64.
	Data []byte
}

// AccountMeta is one account of an Instruction.
type AccountMeta struct {
	// Pubkey is the account's address.
	Pubkey chain.Address
	// IsSigner and IsWritable are its flags.
	IsSigner, IsWritable bool
}

// swapBody is the request body after quoteResponse, in the order sent.
type swapBody struct {
	UserPublicKey                 string `json:"userPublicKey,omitempty"`
	Taker                         string `json:"taker,omitempty"`
	WrapAndUnwrapSol              bool   `json:"wrapAndUnwrapSol"`
	Payer                         string `json:"payer,omitempty"`
	FeeAccount                    string `json:"feeAccount,omitempty"`
	DestinationTokenAccount       string `json:"destinationTokenAccount,omitempty"`
	UseSharedAccounts             *bool  `json:"useSharedAccounts,omitempty"`
	ComputeUnitPriceMicroLamports uint64 `json:"computeUnitPriceMicroLamports,omitempty"`
	PrioritizationFeeLamports     uint64 `json:"prioritizationFeeLamports,omitempty"`
	DynamicComputeUnitLimit       bool   `json:"dynamicComputeUnitLimit,omitempty"`
	SkipUserAccountsRPCCalls      bool   `json:"skipUserAccountsRpcCalls,omitempty"`
	BlockhashSlotsToExpiry        uint16 `json:"blockhashSlotsToExpiry,omitempty"`
}

// SwapInstructions posts rawQuote (a Quote.Raw, byte for byte) with r to
// POST /swap-instructions and returns the instructions. An answer whose
// simulationError is not null is an error of class ErrSimulationFailed
// (SIMULATION_FAILED) carrying a *SimulationError; see the package doc for
// the others.
func (c *Client) SwapInstructions(ctx context.Context, rawQuote json.RawMessage, r SwapRequest) (Instructions, error) {
	const op = "jupiter.SwapInstructions"
	body, err := c.swapBody(op, rawQuote, r)
	if err != nil {
		return Instructions{}, err
	}
	a, err := c.call(ctx, op, http.MethodPost, "/swap-instructions", nil, body)
	if err != nil {
		return Instructions{}, err
	}
	ins, err := parseInstructions(op, a.body)
	if err != nil {
		return Instructions{}, err
	}
	ins.RequestID = a.requestID
	return ins, nil
}

// swapBody validates r and writes the body: {"quoteResponse": rawQuote as
// is, then r's fields}. encoding/json would compact the raw message and
// escape <, > and & in it, so the quote is spliced in, not marshalled.
func (c *Client) swapBody(op string, rawQuote json.RawMessage, r SwapRequest) ([]byte, error) {
	t := bytes.TrimLeft(rawQuote, " \t\r\n")
	if len(t) == 0 || t[0] != '{' || !json.Valid(rawQuote) {
		return nil, fault.Invalid(op, "quoteResponse", "The quote must be the raw JSON object the aggregator sent.")
	}
	for _, f := range []struct{ field, v string }{{"userPublicKey", r.UserPublicKey}, {"payer", r.Payer},
		{"feeAccount", r.FeeAccount}, {"destinationTokenAccount", r.DestinationTokenAccount}} {
		if f.v == "" && f.field != "userPublicKey" {
			continue
		}
		if _, err := token2022.ParsePublicKey(f.v); err != nil {
			return nil, fault.Invalid(op, f.field, "The address is not a base58 public key.")
		}
	}
	if r.ComputeUnitPriceMicroLamports != 0 && r.PrioritizationFeeLamports != 0 {
		return nil, fault.Invalid(op, "computeUnitPriceMicroLamports", "A compute unit price and a prioritization fee are exclusive.")
	}
	b := swapBody{WrapAndUnwrapSol: r.WrapAndUnwrapSol, Payer: r.Payer, FeeAccount: r.FeeAccount,
		DestinationTokenAccount: r.DestinationTokenAccount, UseSharedAccounts: r.UseSharedAccounts,
		ComputeUnitPriceMicroLamports: r.ComputeUnitPriceMicroLamports, PrioritizationFeeLamports: r.PrioritizationFeeLamports,
		DynamicComputeUnitLimit: r.DynamicComputeUnitLimit, SkipUserAccountsRPCCalls: r.SkipUserAccountsRPCCalls,
		BlockhashSlotsToExpiry: r.BlockhashSlotsToExpiry}
	if c.version == V2 {
		b.Taker = r.UserPublicKey
	} else {
		b.UserPublicKey = r.UserPublicKey
	}
	rest, err := json.Marshal(b)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	out := make([]byte, 0, len(rawQuote)+len(rest)+20)
	out = append(out, `{"quoteResponse":`...)
	out = append(out, rawQuote...)
	out = append(out, ',')
	out = append(out, rest[1:]...) // rest is never "{}": wrapAndUnwrapSol is always there
	return out, nil
}

// wireIx is an instruction on the wire.
type wireIx struct {
	ProgramID *string `json:"programId"`
	Accounts  []struct {
		Pubkey     *string `json:"pubkey"`
		IsSigner   *bool   `json:"isSigner"`
		IsWritable *bool   `json:"isWritable"`
	} `json:"accounts"`
	Data *string `json:"data"`
}

// wireInstructions is the /swap-instructions answer (swap.md §1.5).
type wireInstructions struct {
	TokenLedgerInstruction        *wireIx             `json:"tokenLedgerInstruction"`
	ComputeBudgetInstructions     []wireIx            `json:"computeBudgetInstructions"`
	SetupInstructions             []wireIx            `json:"setupInstructions"`
	SwapInstruction               *wireIx             `json:"swapInstruction"`
	CleanupInstruction            *wireIx             `json:"cleanupInstruction"`
	OtherInstructions             []wireIx            `json:"otherInstructions"`
	AddressLookupTableAddresses   []string            `json:"addressLookupTableAddresses"`
	AddressesByLookupTableAddress map[string][]string `json:"addressesByLookupTableAddress"`
	BlockhashWithMetadata         *struct {
		Blockhash            json.RawMessage  `json:"blockhash"`
		LastValidBlockHeight *json.RawMessage `json:"lastValidBlockHeight"`
	} `json:"blockhashWithMetadata"`
	LastValidBlockHeight      *json.RawMessage `json:"lastValidBlockHeight"`
	ComputeUnitLimit          *json.RawMessage `json:"computeUnitLimit"`
	PrioritizationFeeLamports *json.RawMessage `json:"prioritizationFeeLamports"`
	PrioritizationType        *struct {
		ComputeBudget *struct {
			MicroLamports *json.RawMessage `json:"microLamports"`
		} `json:"computeBudget"`
		Jito *struct {
			Lamports *json.RawMessage `json:"lamports"`
		} `json:"jito"`
	} `json:"prioritizationType"`
	DynamicSlippageReport json.RawMessage `json:"dynamicSlippageReport"`
	SimulationError       json.RawMessage `json:"simulationError"`
}

// ParseInstructions reads a /swap-instructions answer's raw bytes as
// SwapInstructions does.
func ParseInstructions(raw []byte) (Instructions, error) {
	return parseInstructions("jupiter.ParseInstructions", raw)
}

func parseInstructions(op string, raw []byte) (Instructions, error) {
	var w wireInstructions
	if err := decodeObject(raw, &w); err != nil {
		return Instructions{}, malformed(op, "instructions", err)
	}
	if len(w.SimulationError) > 0 && !bytes.Equal(bytes.TrimSpace(w.SimulationError), []byte("null")) {
		var se struct {
			ErrorCode string `json:"errorCode"`
			Error     string `json:"error"`
		}
		if json.Unmarshal(w.SimulationError, &se) != nil {
			se.Error = string(w.SimulationError)
		}
		sim := &SimulationError{ErrorCode: clip(se.ErrorCode, 100), Message: clip(se.Error, 200)}
		e := &fault.Error{Op: op, Code: fault.SimulationFailed, Message: "The swap aggregator's simulation of the swap failed.", Err: sim}
		e = e.With("retryable", false)
		if sim.ErrorCode != "" {
			e = e.With("provider_code", sim.ErrorCode)
		}
		return Instructions{}, e
	}
	ins := Instructions{Raw: append(json.RawMessage(nil), raw...)}
	var err error
	list := func(field string, ws []wireIx) ([]Instruction, error) {
		out := make([]Instruction, 0, len(ws))
		for i, wi := range ws {
			ix, sub, err := parseIx(wi)
			if err != nil {
				return nil, malformed(op, fmt.Sprintf("%s[%d]%s", field, i, sub), err)
			}
			out = append(out, ix)
		}
		return out, nil
	}
	one := func(field string, wi *wireIx) (*Instruction, error) {
		if wi == nil {
			return nil, nil
		}
		ix, sub, err := parseIx(*wi)
		if err != nil {
			return nil, malformed(op, field+sub, err)
		}
		return &ix, nil
	}
	if ins.ComputeBudget, err = list("computeBudgetInstructions", w.ComputeBudgetInstructions); err != nil {
		return Instructions{}, err
	}
	if ins.Setup, err = list("setupInstructions", w.SetupInstructions); err != nil {
		return Instructions{}, err
	}
	if ins.Other, err = list("otherInstructions", w.OtherInstructions); err != nil {
		return Instructions{}, err
	}
	if ins.TokenLedger, err = one("tokenLedgerInstruction", w.TokenLedgerInstruction); err != nil {
		return Instructions{}, err
	}
	if ins.Cleanup, err = one("cleanupInstruction", w.CleanupInstruction); err != nil {
		return Instructions{}, err
	}
	if w.SwapInstruction == nil {
		return Instructions{}, malformed(op, "swapInstruction", errors.New("missing"))
	}
	swap, err := one("swapInstruction", w.SwapInstruction)
	if err != nil {
		return Instructions{}, err
	}
	ins.Swap = *swap
	for i, s := range w.AddressLookupTableAddresses {
		a, err := token2022.ParsePublicKey(s)
		if err != nil {
			return Instructions{}, malformed(op, fmt.Sprintf("addressLookupTableAddresses[%d]", i), errors.New("not a base58 address"))
		}
		ins.AddressLookupTables = append(ins.AddressLookupTables, a)
	}
	if w.AddressesByLookupTableAddress != nil {
		ins.AddressesByLookupTable = make(map[chain.Address][]chain.Address, len(w.AddressesByLookupTableAddress))
		for t, keys := range w.AddressesByLookupTableAddress {
			ta, err := token2022.ParsePublicKey(t)
			if err != nil {
				return Instructions{}, malformed(op, "addressesByLookupTableAddress", errors.New("a table is not a base58 address"))
			}
			addrs := make([]chain.Address, 0, len(keys))
			for _, k := range keys {
				ka, err := token2022.ParsePublicKey(k)
				if err != nil {
					return Instructions{}, malformed(op, "addressesByLookupTableAddress."+clip(t, 44), errors.New("not a base58 address"))
				}
				addrs = append(addrs, ka)
			}
			ins.AddressesByLookupTable[ta] = addrs
		}
		if w.AddressLookupTableAddresses == nil {
			for t := range ins.AddressesByLookupTable {
				ins.AddressLookupTables = append(ins.AddressLookupTables, t)
			}
			slices.SortFunc(ins.AddressLookupTables, func(a, b chain.Address) int { return bytes.Compare(a[:], b[:]) })
		}
	}
	if bm := w.BlockhashWithMetadata; bm != nil {
		if ins.Blockhash, err = blockhashText(bm.Blockhash); err != nil {
			return Instructions{}, malformed(op, "blockhashWithMetadata.blockhash", err)
		}
		if bm.LastValidBlockHeight != nil {
			if ins.LastValidBlockHeight, err = u64Number(*bm.LastValidBlockHeight, ^uint64(0)); err != nil {
				return Instructions{}, malformed(op, "blockhashWithMetadata.lastValidBlockHeight", err)
			}
		}
	}
	if w.LastValidBlockHeight != nil {
		if ins.LastValidBlockHeight, err = u64Number(*w.LastValidBlockHeight, ^uint64(0)); err != nil {
			return Instructions{}, malformed(op, "lastValidBlockHeight", err)
		}
	}
	if w.ComputeUnitLimit != nil {
		n, err := u64Number(*w.ComputeUnitLimit, 1<<32-1)
		if err != nil {
			return Instructions{}, malformed(op, "computeUnitLimit", err)
		}
		ins.ComputeUnitLimit = uint32(n)
	}
	if w.PrioritizationFeeLamports != nil {
		if ins.PrioritizationFeeLamports, err = u64Number(*w.PrioritizationFeeLamports, ^uint64(0)); err != nil {
			return Instructions{}, malformed(op, "prioritizationFeeLamports", err)
		}
	}
	if pt := w.PrioritizationType; pt != nil {
		if pt.ComputeBudget != nil && pt.ComputeBudget.MicroLamports != nil {
			if ins.ComputeUnitPriceMicroLamports, err = u64Number(*pt.ComputeBudget.MicroLamports, ^uint64(0)); err != nil {
				return Instructions{}, malformed(op, "prioritizationType.computeBudget.microLamports", err)
			}
		}
		if pt.Jito != nil && pt.Jito.Lamports != nil {
			if ins.JitoTipLamports, err = u64Number(*pt.Jito.Lamports, ^uint64(0)); err != nil {
				return Instructions{}, malformed(op, "prioritizationType.jito.lamports", err)
			}
		}
	}
	if r := bytes.TrimSpace(w.DynamicSlippageReport); len(r) > 0 && !bytes.Equal(r, []byte("null")) {
		ins.DynamicSlippageReport = append(json.RawMessage(nil), r...)
	}
	return ins, nil
}

// parseIx reads one instruction; sub is the failing sub-path.
func parseIx(wi wireIx) (Instruction, string, error) {
	var ix Instruction
	if wi.ProgramID == nil {
		return ix, ".programId", errors.New("missing")
	}
	p, err := token2022.ParsePublicKey(*wi.ProgramID)
	if err != nil {
		return ix, ".programId", errors.New("not a base58 address")
	}
	ix.ProgramID = p
	ix.Accounts = make([]AccountMeta, 0, len(wi.Accounts))
	for i, a := range wi.Accounts {
		if a.Pubkey == nil || a.IsSigner == nil || a.IsWritable == nil {
			return ix, fmt.Sprintf(".accounts[%d]", i), errors.New("pubkey, isSigner or isWritable missing")
		}
		k, err := token2022.ParsePublicKey(*a.Pubkey)
		if err != nil {
			return ix, fmt.Sprintf(".accounts[%d].pubkey", i), errors.New("not a base58 address")
		}
		ix.Accounts = append(ix.Accounts, AccountMeta{Pubkey: k, IsSigner: *a.IsSigner, IsWritable: *a.IsWritable})
	}
	if wi.Data == nil {
		return ix, ".data", errors.New("missing")
	}
	if ix.Data, err = base64.StdEncoding.Strict().DecodeString(*wi.Data); err != nil {
		return ix, ".data", errors.New("not canonical base64")
	}
	return ix, "", nil
}

// blockhashText reads V2's blockhash: 32 bytes as a JSON array of numbers,
// or a base58 string.
func blockhashText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		k, err := token2022.ParsePublicKey(s)
		if err != nil {
			return "", errors.New("not a base58 hash")
		}
		return k.String(), nil
	}
	var nums []json.RawMessage
	if json.Unmarshal(raw, &nums) != nil || len(nums) != 32 {
		return "", errors.New("neither 32 bytes nor a base58 string")
	}
	var h chain.Address
	for i, n := range nums {
		v, err := u64Number(n, 255)
		if err != nil {
			return "", fmt.Errorf("byte %d: %w", i, err)
		}
		h[i] = byte(v)
	}
	return h.String(), nil
}
