package x402

// This file holds the protocol's wire objects (web3.md §1.4, version 2)
// and their header encoding (§1.3): standard, padded base64 of the JSON.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Version is the protocol version the platform speaks (x402Version).
const Version = 2

// SchemeExact is the one payment scheme the platform serves: an exact
// amount of a token, here on Solana.
const SchemeExact = "exact"

// The protocol's HTTP headers (web3.md §1.3).
const (
	// HeaderRequired carries a PaymentRequired on a 402.
	HeaderRequired = "PAYMENT-REQUIRED"
	// HeaderSignature carries the client's PaymentPayload.
	HeaderSignature = "PAYMENT-SIGNATURE"
	// HeaderResponse carries a SettleResponse, on success and on failure.
	HeaderResponse = "PAYMENT-RESPONSE"
)

// ResourceInfo describes the resource a payment buys.
type ResourceInfo struct {
	// URL is the resource's address.
	URL string `json:"url"`
	// Description says what it is.
	Description string `json:"description,omitempty"`
	// MimeType is the media type of what it answers.
	MimeType string `json:"mimeType,omitempty"`
}

// Extra is the scheme-specific part of requirements on Solana.
type Extra struct {
	// FeePayer is the facilitator's fee payer, the transaction's first
	// key, whose signature slot the client leaves empty.
	FeePayer string `json:"feePayer"`
	// Memo is the text the transaction's one Memo instruction must carry;
	// empty lets the client choose a random one.
	Memo string `json:"memo,omitempty"`
}

// Requirements are one way to pay (PaymentRequirements).
type Requirements struct {
	// Scheme is "exact".
	Scheme string `json:"scheme"`
	// Network is the cluster's CAIP-2 id.
	Network string `json:"network"`
	// Amount is the exact atomic amount, as a decimal string.
	Amount string `json:"amount"`
	// Asset is the mint (base58).
	Asset string `json:"asset"`
	// PayTo is the wallet (base58) whose associated token account
	// receives the amount.
	PayTo string `json:"payTo"`
	// MaxTimeoutSeconds bounds how long the payment takes.
	MaxTimeoutSeconds int `json:"maxTimeoutSeconds"`
	// Extra holds the fee payer and the memo.
	Extra Extra `json:"extra"`
}

// PaymentRequired is what a 402 carries in PAYMENT-REQUIRED.
type PaymentRequired struct {
	// X402Version is 2.
	X402Version int `json:"x402Version"`
	// Error says why payment is required.
	Error string `json:"error,omitempty"`
	// Resource is what is bought.
	Resource ResourceInfo `json:"resource"`
	// Accepts are the ways to pay.
	Accepts []Requirements `json:"accepts"`
}

// PaymentPayload is the client's payment (PAYMENT-SIGNATURE).
type PaymentPayload struct {
	// X402Version is the protocol version the client speaks.
	X402Version int `json:"x402Version"`
	// Resource is the resource the client pays for, as it was offered.
	Resource *ResourceInfo `json:"resource,omitempty"`
	// Accepted is the requirement the client chose.
	Accepted Requirements `json:"accepted"`
	// Payload is the scheme's payload: on Solana, SVMPayload.
	Payload json.RawMessage `json:"payload"`
	// Extensions are echoed extensions, kept as sent.
	Extensions json.RawMessage `json:"extensions,omitempty"`
}

// SVMPayload is the exact scheme's payload on Solana: the partially
// signed transaction, base64 of its wire bytes.
type SVMPayload struct {
	// Transaction is the base64 wire transaction, the fee payer's
	// signature slot empty.
	Transaction string `json:"transaction"`
}

// VerifyResponse is a facilitator's verdict on a payment.
type VerifyResponse struct {
	// IsValid reports that every rule passed.
	IsValid bool `json:"isValid"`
	// InvalidReason names the first rule that failed.
	InvalidReason string `json:"invalidReason,omitempty"`
	// InvalidMessage says more, for people.
	InvalidMessage string `json:"invalidMessage,omitempty"`
	// Payer is the wallet that pays (the transfer's authority).
	Payer string `json:"payer,omitempty"`
}

// SettleResponse is a settlement's outcome (PAYMENT-RESPONSE).
type SettleResponse struct {
	// Success reports a payment confirmed on chain.
	Success bool `json:"success"`
	// ErrorReason names why it failed.
	ErrorReason string `json:"errorReason,omitempty"`
	// ErrorMessage says more, for people.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Payer is the paying wallet.
	Payer string `json:"payer,omitempty"`
	// Transaction is the transaction's signature (base58); "" on failure.
	Transaction string `json:"transaction"`
	// Network is the cluster's CAIP-2 id.
	Network string `json:"network"`
	// Amount is the atomic amount paid.
	Amount string `json:"amount,omitempty"`
}

// SupportedKind is one (version, scheme, network) a facilitator serves.
type SupportedKind struct {
	// X402Version is the protocol version.
	X402Version int `json:"x402Version"`
	// Scheme is the payment scheme.
	Scheme string `json:"scheme"`
	// Network is the CAIP-2 id.
	Network string `json:"network"`
	// Extra carries the fee payer on Solana.
	Extra *Extra `json:"extra,omitempty"`
}

// Supported is a facilitator's GET /supported.
type Supported struct {
	// Kinds are what it serves.
	Kinds []SupportedKind `json:"kinds"`
	// Extensions are the extensions it knows.
	Extensions []string `json:"extensions"`
	// Signers are its signing addresses by CAIP-2 family ("solana:*").
	Signers map[string][]string `json:"signers"`
}

// FeePayer returns the fee payer s lists for scheme exact on network
// under version 2; ok is false when it serves no such kind.
func (s Supported) FeePayer(network string) (string, bool) {
	for _, k := range s.Kinds {
		if k.X402Version == Version && k.Scheme == SchemeExact && k.Network == network && k.Extra != nil && k.Extra.FeePayer != "" {
			return k.Extra.FeePayer, true
		}
	}
	return "", false
}

// EncodeHeader encodes v as a protocol header value: standard base64,
// padded, of its JSON.
func EncodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("x402: encode header: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodeHeader decodes a protocol header value (standard, padded base64
// of JSON; base64url is refused, as the reference client does) into v.
func DecodeHeader(s string, v any) error {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return fmt.Errorf("x402: the header is not standard base64: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("x402: the header is not JSON of its object: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("x402: the header carries more than one JSON value")
	}
	return nil
}
