package jupitertest

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/internal/simctl"
)

// Defaults of Config.
const (
	// DefaultLabel is the venue label of the simulator's pools.
	DefaultLabel = "Loopback CP"
	// DefaultComputeUnitLimit is the compute unit limit it reports, the
	// limit Jupiter sets without dynamicComputeUnitLimit.
	DefaultComputeUnitLimit = 1_400_000
	// DefaultComputeUnitPrice is the compute unit price, in micro-lamports,
	// used when a request fixes none.
	DefaultComputeUnitPrice = 1_000
	// DefaultRateLimit is the requests per 60-second window the rate-limit
	// headers report.
	DefaultRateLimit = 600
	// maxIssued is how many issued quotes the simulator remembers.
	maxIssued = 4096
	// maxBody bounds a request body.
	maxBody = 1 << 20
)

// Clock tells the simulator's time (the rate-limit window).
type Clock interface {
	Now() time.Time
}

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// APIKey, when set, is the key clients present as x-api-key: a
	// request presenting another key gets 401. A request presenting none
	// is served, as Jupiter serves keyless requests, unless RequireKey.
	APIKey string
	// RequireKey refuses (401) requests without x-api-key when APIKey is
	// set.
	RequireKey bool
	// Label is the pools' venue label. Empty means DefaultLabel.
	Label string
	// ComputeUnitLimit is the SetComputeUnitLimit value and the reported
	// computeUnitLimit. Zero means DefaultComputeUnitLimit.
	ComputeUnitLimit uint32
	// ComputeUnitPrice is the compute unit price, in micro-lamports, when a
	// request fixes none. Zero means DefaultComputeUnitPrice.
	ComputeUnitPrice uint64
	// V2 answers with Swap V2's differences: routePlan percent null, no
	// swapMode in quotes, addressesByLookupTableAddress instead of
	// addressLookupTableAddresses, and blockhashWithMetadata instead of
	// lastValidBlockHeight.
	V2 bool
	// RateLimit is the window the rate-limit headers of 200 answers
	// report (not enforced; inject TooManyRequests for a 429). Zero means
	// DefaultRateLimit.
	RateLimit int64
	// Clock is the simulator's time. Nil means the wall clock.
	Clock Clock
	// Addr is the loopback listen address. Empty means 127.0.0.1:0.
	Addr string
}

// pool is a pool the simulator routes through.
type pool struct {
	addr        chain.Address
	lookupTable chain.Address
}

// issued is a quote the simulator sent.
type issued struct {
	hash        [32]byte
	key         string
	pool        chaintest.Pool // as read when quoted
	side        side
	inAmount    uint64
	outAmount   uint64
	slippageBps uint16
	dynamic     bool
}

// Server is the loopback aggregator. It is safe for concurrent use.
type Server struct {
	cfg     Config
	cluster *chaintest.Cluster
	url     string
	srv     *http.Server
	run     *simctl.Runner
	events  *simctl.Events
	faults  simctl.Script[Fault]
	calls   sync.Map // path -> *atomic.Int64
	reqIDs  simctl.Counter
	closing sync.Once

	mu          sync.Mutex
	pools       []pool
	issued      map[[32]byte]*issued
	byContent   map[string]*issued
	issuedOrder [][32]byte
	lastReqID   string
	window      time.Time
	windowCount int64
}

// New starts a simulator on loopback that routes through pools on
// cluster.
func New(cluster *chaintest.Cluster, cfg Config) (*Server, error) {
	if cluster == nil {
		return nil, errors.New("jupitertest: a cluster is required")
	}
	if cfg.Label == "" {
		cfg.Label = DefaultLabel
	}
	if cfg.ComputeUnitLimit == 0 {
		cfg.ComputeUnitLimit = DefaultComputeUnitLimit
	}
	if cfg.ComputeUnitPrice == 0 {
		cfg.ComputeUnitPrice = DefaultComputeUnitPrice
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.Clock == nil {
		cfg.Clock = simctl.WallClock{}
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		return nil, errors.New("jupitertest: Addr must be a loopback address")
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("jupitertest: listen: %w", err)
	}
	s := &Server{cfg: cfg, cluster: cluster, url: "http://" + ln.Addr().String(),
		run:    simctl.NewRunner(simctl.RunnerConfig{Clock: cfg.Clock}),
		events: simctl.NewEvents(simctl.EventsConfig{Clock: cfg.Clock}),
		issued: map[[32]byte]*issued{}, byContent: map[string]*issued{}}
	m := http.NewServeMux()
	m.Handle("GET "+PathQuote, s.api(PathQuote, s.handleQuote))
	m.Handle("POST "+PathSwapInstructions, s.api(PathSwapInstructions, s.handleSwapInstructions))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.countCall(r.URL.Path)
		writeError(w, http.StatusNotFound, "", "Not Found")
	})
	s.srv = &http.Server{Handler: s.events.Middleware(m), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.run.Context() }}
	s.run.Go(func(context.Context) { _ = s.srv.Serve(ln) })
	return s, nil
}

// URL is the simulator's base URL, the BaseURL of a jupiter client.
func (s *Server) URL() string { return s.url }

// APIKey is Config.APIKey.
func (s *Server) APIKey() string { return s.cfg.APIKey }

// Close stops the server and interrupts delayed answers.
func (s *Server) Close() error {
	var err error
	s.closing.Do(func() {
		s.run.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err = s.srv.Shutdown(ctx); err != nil {
			err = s.srv.Close()
		}
		s.run.Wait()
	})
	if err != nil {
		return fmt.Errorf("jupitertest: close: %w", err)
	}
	return nil
}

// Calls is how many requests path received (PathQuote,
// PathSwapInstructions or any other path), including those a fault or the
// key check answered.
func (s *Server) Calls(path string) int {
	v, ok := s.calls.Load(path)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int64).Load())
}

func (s *Server) countCall(path string) {
	v, ok := s.calls.Load(path)
	if !ok {
		v, _ = s.calls.LoadOrStore(path, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// Events returns the requests the simulator answered, oldest first, with
// their headers and bodies (the newest 10,000).
func (s *Server) Events() []simctl.Event { return s.events.List() }

// ResetEvents empties the event log.
func (s *Server) ResetEvents() { s.events.Reset() }

// LastRequestID is the x-api-gateway-request-id of the latest answer.
func (s *Server) LastRequestID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReqID
}

// AddPool routes quotes through the pool account at poolAddress, which
// must already exist on the cluster, owned by chaintest.PoolProgramID,
// with the contract's layout (SeedPool creates one). lookupTable is the
// address lookup table the simulator returns for swaps through it (the
// zero address for none). Adding a pool again replaces its lookup table.
func (s *Server) AddPool(poolAddress, lookupTable chain.Address) error {
	acct, err := s.cluster.GetAccountInfo(context.Background(), poolAddress, chain.Processed)
	if err != nil {
		return fmt.Errorf("jupitertest: AddPool: %w", err)
	}
	if acct.Owner != chaintest.PoolProgramID() {
		return fmt.Errorf("jupitertest: AddPool: %s is owned by %s, not the pool program", poolAddress, acct.Owner)
	}
	if _, err := chaintest.DecodePool(poolAddress, acct.Data); err != nil {
		return fmt.Errorf("jupitertest: AddPool: %s: %w", poolAddress, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.pools {
		if p.addr == poolAddress {
			s.pools[i].lookupTable = lookupTable
			return nil
		}
	}
	s.pools = append(s.pools, pool{addr: poolAddress, lookupTable: lookupTable})
	return nil
}

// api wraps an API handler: it counts the call, stamps the request id,
// checks the key and applies the injected faults.
func (s *Server) api(path string, h func(http.ResponseWriter, *http.Request, plan)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.countCall(path)
		id := s.reqIDs.Next("jupitertest-")
		s.mu.Lock()
		s.lastReqID = id
		s.mu.Unlock()
		w.Header().Set("x-api-gateway-request-id", id)
		if s.cfg.APIKey != "" {
			got, sent := r.Header["X-Api-Key"]
			switch {
			case !sent && s.cfg.RequireKey:
				writeError(w, http.StatusUnauthorized, "", "Unauthorized")
				return
			case sent && (len(got) != 1 || subtle.ConstantTimeCompare([]byte(got[0]), []byte(s.cfg.APIKey)) != 1):
				writeError(w, http.StatusUnauthorized, "", "Invalid API key")
				return
			}
		}
		p := s.takeFaults(path)
		if err := s.run.Sleep(r.Context(), p.delay); err != nil {
			return // the client left or the simulator closed
		}
		if f := p.fault; f != nil {
			switch {
			case f.RateLimit != nil:
				h := w.Header()
				h.Set("x-ratelimit-remaining", strconv.FormatInt(f.RateLimit.Remaining, 10))
				h.Set("x-ratelimit-current", strconv.FormatInt(f.RateLimit.Current, 10))
				h.Set("x-ratelimit-reset", strconv.FormatInt(f.RateLimit.Reset, 10))
				writeError(w, http.StatusTooManyRequests, "", "[API Gateway] Too many requests")
			case f.Body != "":
				status := f.Status
				if status == 0 {
					status = http.StatusOK
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(f.Body))
			default:
				writeError(w, f.Status, f.ErrorCode, f.Message)
			}
			return
		}
		s.rateHeaders(w.Header())
		h(w, r, p)
	})
}

// rateHeaders sets the rate-limit headers of a served request: a fixed
// 60-second window on the clock.
func (s *Server) rateHeaders(h http.Header) {
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	if s.window.IsZero() || !now.Before(s.window.Add(time.Minute)) {
		s.window, s.windowCount = now, 0
	}
	s.windowCount++
	cur, reset := s.windowCount, s.window.Add(time.Minute).Unix()
	s.mu.Unlock()
	h.Set("x-ratelimit-remaining", strconv.FormatInt(s.cfg.RateLimit-cur, 10))
	h.Set("x-ratelimit-current", strconv.FormatInt(cur, 10))
	h.Set("x-ratelimit-reset", strconv.FormatInt(reset, 10))
}

// remember records a quote the simulator sends.
func (s *Server) remember(q *issued) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.issued[q.hash]; ok {
		return
	}
	s.issued[q.hash] = q
	s.byContent[q.key] = q
	s.issuedOrder = append(s.issuedOrder, q.hash)
	if len(s.issuedOrder) > maxIssued {
		old := s.issued[s.issuedOrder[0]]
		delete(s.issued, old.hash)
		if s.byContent[old.key] == old {
			delete(s.byContent, old.key)
		}
		s.issuedOrder = s.issuedOrder[1:]
	}
}

// lookup returns the issued quote with these exact bytes, if any.
func (s *Server) lookup(hash [32]byte) (*issued, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.issued[hash]
	return q, ok
}

// lookupContent returns the issued quote with this content key, if any.
func (s *Server) lookupContent(key string) (*issued, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.byContent[key]
	return q, ok
}

// poolList is a copy of the pools.
func (s *Server) poolList() []pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pool(nil), s.pools...)
}

// lookupTableOf is the lookup table registered for a pool.
func (s *Server) lookupTableOf(addr chain.Address) chain.Address {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pools {
		if p.addr == addr {
			return p.lookupTable
		}
	}
	return chain.Address{}
}

// marshal encodes v as Jupiter's servers do: compact, without escaping
// <, > and &, no trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// writeJSON answers 200 with body.
func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeError answers status with {"error": msg, "errorCode": code}, the
// code left out when empty.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	type body struct {
		Error     string `json:"error"`
		ErrorCode string `json:"errorCode,omitempty"`
	}
	b, _ := marshal(body{Error: msg, ErrorCode: code})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
