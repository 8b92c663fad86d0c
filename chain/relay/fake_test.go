package relay_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/token2022"
)

// fakeChain is a scriptable relay.ChainClient that logs every call in
// order.
type fakeChain struct {
	mu      sync.Mutex
	genesis string
	height  uint64 // finalized block height
	valid   bool   // IsBlockhashValid's answer
	// statuses answers GetSignatureStatuses: each call takes the next
	// entry while more than one is queued, then keeps answering the last
	// (nil: the node does not know the signature).
	statuses []*chain.SignatureStatus
	refs     map[chain.Address][]chain.SignatureInfo
	sendErrs []error // answers of the next sends, in order; nil = accept
	sent     [][]byte
	fail     map[string]error // a method's error, by method name
	log      []string
}

var _ relay.ChainClient = (*fakeChain)(nil)

func (f *fakeChain) call(m string) error {
	f.log = append(f.log, m)
	return f.fail[m]
}

func (f *fakeChain) GetGenesisHash(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.genesis, f.call("getGenesisHash")
}

func (f *fakeChain) GetBlockHeight(context.Context, chain.Commitment) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.height, f.call("getBlockHeight")
}

func (f *fakeChain) IsBlockhashValid(context.Context, string, chain.Commitment) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.valid, f.call("isBlockhashValid")
}

func (f *fakeChain) SendTransaction(_ context.Context, b []byte, _ chain.SendOptions) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, slices.Clone(b))
	if err := f.call("sendTransaction"); err != nil {
		return "", err
	}
	if len(f.sendErrs) > 0 {
		err := f.sendErrs[0]
		f.sendErrs = f.sendErrs[1:]
		if err != nil {
			return "", err
		}
	}
	return token2022.EncodeBase58(b[1:65]), nil
}

func (f *fakeChain) GetSignatureStatuses(_ context.Context, sigs []string, history bool) ([]*chain.SignatureStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getSignatureStatuses"); err != nil {
		return nil, err
	}
	if !history {
		return nil, fmt.Errorf("statuses asked without history")
	}
	var st *chain.SignatureStatus
	if len(f.statuses) > 0 {
		st = f.statuses[0]
		if len(f.statuses) > 1 {
			f.statuses = f.statuses[1:]
		}
	}
	out := make([]*chain.SignatureStatus, len(sigs))
	if st != nil {
		c := *st
		out[0] = &c
	}
	return out, nil
}

func (f *fakeChain) GetSignaturesForAddress(_ context.Context, a chain.Address, _ chain.SignaturesOptions, _ chain.Commitment) ([]chain.SignatureInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("getSignaturesForAddress"); err != nil {
		return nil, err
	}
	return slices.Clone(f.refs[a]), nil
}

// count returns how many times method was called.
func (f *fakeChain) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.log {
		if m == method {
			n++
		}
	}
	return n
}

// calls returns the call log.
func (f *fakeChain) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// setStatus makes the node report st from now on.
func (f *fakeChain) setStatus(st *chain.SignatureStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses = []*chain.SignatureStatus{st}
}

// landedAt is a successful status at commitment c in slot 77.
func landedAt(c chain.Commitment) *chain.SignatureStatus {
	return &chain.SignatureStatus{Slot: 77, Status: c}
}

// newChain is a healthy devnet node at finalized height 1000 with a
// valid blockhash and no statuses.
func newChain() *fakeChain {
	return &fakeChain{genesis: chain.DevnetGenesisHash, height: 1000, valid: true, refs: map[chain.Address][]chain.SignatureInfo{},
		fail: map[string]error{}}
}

// signed returns wire bytes of a one-signature transaction over msg with
// a deterministic signature, and that signature in base58.
func signed(msg string) ([]byte, string) {
	a := sha256.Sum256([]byte("sig-a:" + msg))
	b := sha256.Sum256([]byte("sig-b:" + msg))
	sig := append(a[:], b[:]...)
	wire := append([]byte{1}, sig...)
	wire = append(wire, []byte(msg)...)
	return wire, token2022.EncodeBase58(sig)
}

// submitted is a fresh submission of a stored signed transaction whose
// blockhash is valid up to height 1150.
func submitted() relay.Submission {
	wire, sig := signed("pay 100")
	return relay.Submission{Network: chain.Network{GenesisHash: chain.DevnetGenesisHash}.CAIP2(), Signature: sig, Wire: wire,
		Blockhash: "GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi", LastValidBlockHeight: 1150, State: relay.Submitted}
}

// sameBytes reports whether every sent transaction is want.
func sameBytes(sent [][]byte, want []byte) bool {
	for _, b := range sent {
		if !bytes.Equal(b, want) {
			return false
		}
	}
	return true
}
