// Package iristest is a loopback attestation service for tests and the
// example host, on Iris's V2 wire (web3.md §2.5, §2.6): GET
// /v2/messages/{sourceDomain}?transactionHash=0x.. and GET
// /v2/burn/USDC/fees/{source}/{destination}.
//
// A transaction's messages are registered with Observe (as the service
// sees burns on the source chain) and answer 404 until Index; then each
// is pending (attestation "PENDING") until Complete fills the attester's
// fields (nonce, fee and finality executed) and signs the message's
// Keccak-256 with the test attester keys, in increasing address order,
// as Circle's attesters do. Config.CompleteAfter does both on its own
// after a number of lookups, for a host that nobody drives.
//
// Faults: RateLimit answers 429 with Retry-After; Inject answers any
// status; Replace answers another message for a transaction (an
// attestation of another message); SignWith signs with other keys (an
// attestation of unknown attesters). Sign and Verify give tests, and
// chain/chaintest's receive_message, the attester set's signatures.
package iristest

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/web3/cctp"
)

// The routes, as Inject and Requests name them.
const (
	RouteMessages = "messages"
	RouteFees     = "fees"
)

// Config sets up a Server.
type Config struct {
	// Attesters is how many test attester keys sign (default 2), all of
	// them: the threshold is their number.
	Attesters int
	// CompleteAfter, when positive, indexes an observed transaction at
	// its first lookup and completes it (nonce derived from the
	// transaction, no fee) at the CompleteAfter-th.
	CompleteAfter int
}

// Fault is a scripted answer of one request.
type Fault struct {
	// Status is the HTTP status answered (429 with RetryAfter sets
	// Retry-After when positive).
	Status     int
	RetryAfter time.Duration
}

// message is one message of a transaction.
type message struct {
	seed     string // the transaction and index, the derived nonce's seed
	source   []byte
	answer   []byte // the attested message once complete, or a replacement
	att      []byte
	complete bool
}

// txState is one observed transaction.
type txState struct {
	indexed bool
	lookups int
	msgs    []*message
}

// Server is the loopback service. It is safe for concurrent use.
type Server struct {
	cfg  Config
	srv  *http.Server
	url  string
	keys []*ecdsa.PrivateKey // sorted by address

	mu       sync.Mutex
	txs      map[string]*txState
	signWith []*ecdsa.PrivateKey

	faults   simctl.Script[Fault]
	requests sync.Map // route -> *atomic.Int64
}

// New starts a service on 127.0.0.1 at a free port with fresh attester
// keys.
func New(cfg Config) (*Server, error) {
	if cfg.Attesters <= 0 {
		cfg.Attesters = 2
	}
	s := &Server{cfg: cfg, txs: map[string]*txState{}}
	for range cfg.Attesters {
		k, err := crypto.GenerateKey()
		if err != nil {
			return nil, fmt.Errorf("iristest: attester key: %w", err)
		}
		s.keys = append(s.keys, k)
	}
	slices.SortFunc(s.keys, func(a, b *ecdsa.PrivateKey) int {
		x, y := crypto.PubkeyToAddress(a.PublicKey), crypto.PubkeyToAddress(b.PublicKey)
		return bytes.Compare(x[:], y[:])
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("iristest: listen: %w", err)
	}
	s.url = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/messages/{domain}", s.serveMessages)
	mux.HandleFunc("GET /v2/burn/USDC/fees/{src}/{dst}", s.serveFees)
	s.srv = &http.Server{Handler: mux}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the service's base URL.
func (s *Server) URL() string { return s.url }

// Close stops the service.
func (s *Server) Close() error { return s.srv.Close() }

// Attesters are the attester addresses, in increasing order; Threshold is
// how many sign.
func (s *Server) Attesters() []cctp.EVMAddress {
	out := make([]cctp.EVMAddress, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, cctp.EVMAddress(crypto.PubkeyToAddress(k.PublicKey)))
	}
	return out
}

// Threshold is how many attesters sign an attestation.
func (s *Server) Threshold() int { return len(s.keys) }

// Requests counts the requests of route answered so far, faults included.
func (s *Server) Requests(route string) int {
	v, ok := s.requests.Load(route)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int64).Load())
}

// Inject answers the next times requests of route ("" for both) with f.
func (s *Server) Inject(route string, f Fault, times int) { s.faults.Add(route, f, times) }

// RateLimit answers the next times requests of route with 429 and, when
// positive, Retry-After.
func (s *Server) RateLimit(route string, times int, retryAfter time.Duration) {
	s.faults.Add(route, Fault{Status: http.StatusTooManyRequests, RetryAfter: retryAfter}, times)
}

// key is a transaction's key.
func key(source cctp.Domain, tx cctp.TxHash) string {
	return strconv.FormatUint(uint64(source), 10) + "/" + strings.ToLower(tx.String())
}

// Observe registers a transaction's messages (the MessageSent bytes, in
// log order), not indexed yet.
func (s *Server) Observe(source cctp.Domain, tx cctp.TxHash, messages ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &txState{}
	for i, m := range messages {
		st.msgs = append(st.msgs, &message{seed: key(source, tx) + "/" + strconv.Itoa(i), source: bytes.Clone(m)})
	}
	s.txs[key(source, tx)] = st
}

// Index makes an observed transaction's messages answer pending.
func (s *Server) Index(source cctp.Domain, tx cctp.TxHash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.txs[key(source, tx)]
	if !ok {
		return errors.New("iristest: the transaction was not observed")
	}
	st.indexed = true
	return nil
}

// Attest is what the attester fills in.
type Attest struct {
	// Nonce is the message's nonce (zero means one derived from the
	// transaction and the message's index, unique as Circle's are).
	Nonce cctp.Word
	// FeeExecuted is the fee kept at the mint.
	FeeExecuted uint64
	// FinalityExecuted is the finality attested (zero means the message's
	// minimum).
	FinalityExecuted uint32
}

// Complete indexes a transaction and completes its i-th message with a,
// signing it; it returns the attested message.
func (s *Server) Complete(source cctp.Domain, tx cctp.TxHash, i int, a Attest) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.txs[key(source, tx)]
	if !ok || i < 0 || i >= len(st.msgs) {
		return nil, errors.New("iristest: no such observed message")
	}
	st.indexed = true
	return s.completeLocked(st.msgs[i], a)
}

func (s *Server) completeLocked(m *message, a Attest) ([]byte, error) {
	msg, err := cctp.DecodeMessage(m.source)
	if err != nil {
		return nil, fmt.Errorf("iristest: %w", err)
	}
	msg.Nonce = a.Nonce
	if msg.Nonce.IsZero() {
		msg.Nonce = cctp.Keccak256([]byte("iristest/nonce/" + m.seed))
	}
	msg.FinalityThresholdExecuted = a.FinalityExecuted
	if msg.FinalityThresholdExecuted == 0 {
		msg.FinalityThresholdExecuted = msg.MinFinalityThreshold
	}
	msg.Body.FeeExecuted = cctp.WordOf(a.FeeExecuted)
	m.answer, m.complete = msg.Encode(), true
	m.att = s.signLocked(m.answer)
	return bytes.Clone(m.answer), nil
}

// Replace makes the i-th message of a transaction answer other (complete
// and signed by the attesters when complete is true): an attestation of
// another message.
func (s *Server) Replace(source cctp.Domain, tx cctp.TxHash, i int, other []byte, complete bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.txs[key(source, tx)]
	if !ok || i < 0 || i >= len(st.msgs) {
		return errors.New("iristest: no such observed message")
	}
	st.indexed = true
	m := st.msgs[i]
	m.answer, m.complete, m.att = bytes.Clone(other), complete, nil
	if complete {
		m.att = s.signLocked(other)
	}
	return nil
}

// SignWith makes later completions sign with keys instead of the
// attesters' (nil restores them).
func (s *Server) SignWith(keys ...*ecdsa.PrivateKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signWith = keys
}

// Sign returns the attester set's attestation of msg.
func (s *Server) Sign(msg []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sign(s.keys, msg)
}

func (s *Server) signLocked(msg []byte) []byte {
	if s.signWith != nil {
		return sign(s.signWith, msg)
	}
	return sign(s.keys, msg)
}

// sign signs Keccak-256(msg) with each key, in the given order, with v
// as 27 or 28.
func sign(keys []*ecdsa.PrivateKey, msg []byte) []byte {
	digest := cctp.Keccak256(msg)
	var out []byte
	for _, k := range keys {
		sig, err := crypto.Sign(digest[:], k)
		if err != nil {
			panic("iristest: sign: " + err.Error()) // a valid key always signs
		}
		sig[64] += 27
		out = append(out, sig...)
	}
	return out
}

// Verify checks an attestation of msg as MessageTransmitterV2 does:
// exactly Threshold signatures by distinct attesters in increasing order.
func (s *Server) Verify(msg, attestation []byte) error {
	if len(attestation) != cctp.SignatureSize*len(s.keys) {
		return errors.New("iristest: invalid attestation length")
	}
	digest := cctp.Keccak256(msg)
	attesters := s.Attesters()
	var last []byte
	for i := range len(s.keys) {
		sig := bytes.Clone(attestation[i*cctp.SignatureSize : (i+1)*cctp.SignatureSize])
		if sig[64] >= 27 {
			sig[64] -= 27
		}
		pub, err := crypto.SigToPub(digest[:], sig)
		if err != nil {
			return errors.New("iristest: invalid attester signature")
		}
		a := crypto.PubkeyToAddress(*pub)
		if last != nil && bytes.Compare(a[:], last) <= 0 {
			return errors.New("iristest: invalid signature order or dupe")
		}
		if !slices.Contains(attesters, cctp.EVMAddress(a)) {
			return errors.New("iristest: invalid attester signature")
		}
		last = a[:]
	}
	return nil
}

// fault answers a scripted fault of route; false when none applies.
func (s *Server) fault(w http.ResponseWriter, route string) bool {
	v, _ := s.requests.LoadOrStore(route, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	f, ok := s.faults.Next(route)
	if !ok {
		return false
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, f.Status, map[string]any{"error": http.StatusText(f.Status)})
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveMessages answers GET /v2/messages/{domain}?transactionHash=.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request) {
	if s.fault(w, RouteMessages) {
		return
	}
	d, err := strconv.ParseUint(r.PathValue("domain"), 10, 32)
	tx, werr := cctp.ParseWord(r.URL.Query().Get("transactionHash"))
	if err != nil || werr != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Invalid sourceDomainId or transactionHash"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.txs[key(cctp.Domain(d), tx)]
	if ok && s.cfg.CompleteAfter > 0 {
		st.lookups++
		st.indexed = true
		if st.lookups >= s.cfg.CompleteAfter {
			for _, m := range st.msgs {
				if !m.complete {
					if _, err := s.completeLocked(m, Attest{}); err != nil {
						writeJSON(w, http.StatusInternalServerError, map[string]any{"error": err.Error()})
						return
					}
				}
			}
		}
	}
	if !ok || !st.indexed {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "Message not found"})
		return
	}
	out := []map[string]any{}
	for _, m := range st.msgs {
		body, status, att := m.source, "pending", "PENDING"
		if m.answer != nil {
			body = m.answer
		}
		if m.complete {
			status, att = "complete", cctp.HexBytes(m.att)
		}
		decoded := map[string]any{}
		if dm, err := cctp.DecodeMessage(body); err == nil {
			decoded = map[string]any{"sourceDomain": strconv.FormatUint(uint64(dm.SourceDomain), 10),
				"destinationDomain": strconv.FormatUint(uint64(dm.DestinationDomain), 10), "nonce": dm.Nonce.String(),
				"sender": dm.Sender.String(), "recipient": dm.Recipient.String(), "destinationCaller": dm.DestinationCaller.String(),
				"minFinalityThreshold":      strconv.FormatUint(uint64(dm.MinFinalityThreshold), 10),
				"finalityThresholdExecuted": strconv.FormatUint(uint64(dm.FinalityThresholdExecuted), 10),
				"messageBody":               cctp.HexBytes(body[cctp.HeaderSize:])}
		}
		nonce := ""
		if m.complete {
			nonce = decoded["nonce"].(string)
		}
		out = append(out, map[string]any{"message": cctp.HexBytes(body), "eventNonce": nonce, "attestation": att,
			"status": status, "cctpVersion": 2, "delayReason": nil, "decodedMessage": decoded})
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out})
}

// serveFees answers the fee table of a route to Solana: fast 1 bps,
// standard free.
func (s *Server) serveFees(w http.ResponseWriter, r *http.Request) {
	if s.fault(w, RouteFees) {
		return
	}
	if _, err := strconv.ParseUint(r.PathValue("src"), 10, 32); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "Invalid source domain"})
		return
	}
	writeJSON(w, http.StatusOK, []map[string]any{{"finalityThreshold": 1000, "minimumFee": 1}, {"finalityThreshold": 2000, "minimumFee": 0}})
}
