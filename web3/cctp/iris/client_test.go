package iris_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/iris"
	"github.com/creatormusic/platform/web3/cctp/iristest"
)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// service starts a simulator and an adapter reaching exactly it on a
// settable clock.
func service(t *testing.T) (*iristest.Server, *iris.Client, *clock) {
	t.Helper()
	sim, err := iristest.New(iristest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	clk := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	c, err := iris.New(iris.Config{BaseURL: sim.URL(), HTTPClient: urlguardtest.Client(t, sim.URL()), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c, clk
}

// burnMessage is a source-form V2 burn message.
func burnMessage(amount uint64) []byte {
	return cctp.Message{Version: cctp.MessageVersion, SourceDomain: cctp.DomainBase, DestinationDomain: cctp.DomainSolana,
		MinFinalityThreshold: 2000, Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, Amount: cctp.WordOf(amount),
			MaxFee: cctp.WordOf(10)}}.Encode()
}

// TestMessagesLifecycle: 404 until indexed is ErrNotIndexed; then the
// message is pending with no attestation; then complete, with the
// attester's fields filled and an attestation the attester set signed.
func TestMessagesLifecycle(t *testing.T) {
	sim, c, _ := service(t)
	ctx := context.Background()
	tx := cctp.Keccak256([]byte("tx"))
	src := burnMessage(1_000_000)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !errors.Is(err, cctp.ErrNotIndexed) {
		t.Fatalf("unknown transaction: %v", err)
	}
	sim.Observe(cctp.DomainBase, tx, src)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !errors.Is(err, cctp.ErrNotIndexed) {
		t.Fatalf("observed, not indexed: %v", err)
	}
	if err := sim.Index(cctp.DomainBase, tx); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Messages(ctx, cctp.DomainBase, tx)
	if err != nil || len(msgs) != 1 || msgs[0].Status != cctp.AttestationPending || msgs[0].Attestation != nil {
		t.Fatalf("pending: %+v, %v", msgs, err)
	}
	attested, err := sim.Complete(cctp.DomainBase, tx, 0, iristest.Attest{FeeExecuted: 7})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err = c.Messages(ctx, cctp.DomainBase, tx)
	if err != nil || len(msgs) != 1 || msgs[0].Status != cctp.AttestationComplete {
		t.Fatalf("complete: %+v, %v", msgs, err)
	}
	m, err := cctp.DecodeMessage(msgs[0].Message)
	if err != nil || m.Nonce.IsZero() || m.Body.FeeExecuted != cctp.WordOf(7) || m.FinalityThresholdExecuted != 2000 ||
		string(msgs[0].Message) != string(attested) || msgs[0].EventNonce != m.Nonce.String() {
		t.Fatalf("attested message: %+v, %v", m, err)
	}
	if string(m.SourceForm().Encode()) != string(src) {
		t.Fatal("the attested message's source form is not the burn's")
	}
	if err := sim.Verify(msgs[0].Message, msgs[0].Attestation); err != nil {
		t.Fatalf("the attestation does not verify: %v", err)
	}
	if err := sim.Verify(src, msgs[0].Attestation); err == nil {
		t.Fatal("the attestation verified for another message")
	}
}

// TestBackOff: a 429 makes the adapter stop calling for the service's
// Retry-After (else its BackOff): calls inside the window answer
// rate_limited with retryAfterSeconds and send no request; after it the
// next call reaches the service.
func TestBackOff(t *testing.T) {
	sim, c, clk := service(t)
	ctx := context.Background()
	tx := cctp.Keccak256([]byte("tx"))
	sim.RateLimit(iristest.RouteMessages, 1, 30*time.Second)
	_, err := c.Messages(ctx, cctp.DomainBase, tx)
	if !limited(err, 30) {
		t.Fatalf("429 with Retry-After 30: %v", err)
	}
	clk.Advance(10 * time.Second)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !limited(err, 20) {
		t.Fatalf("inside the window: %v", err)
	}
	if _, err := c.Fees(ctx, cctp.DomainBase, cctp.DomainSolana); !limited(err, 20) {
		t.Fatalf("fees inside the window: %v", err)
	}
	if n := sim.Requests(iristest.RouteMessages) + sim.Requests(iristest.RouteFees); n != 1 {
		t.Fatalf("requests sent = %d, want the one answered 429", n)
	}
	clk.Advance(20 * time.Second)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !errors.Is(err, cctp.ErrNotIndexed) {
		t.Fatalf("after the window: %v", err)
	}
	// Without Retry-After the adapter waits its own five minutes.
	sim.RateLimit(iristest.RouteMessages, 1, 0)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !limited(err, 300) {
		t.Fatalf("429 without Retry-After: %v", err)
	}
	clk.Advance(299 * time.Second)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !limited(err, 1) {
		t.Fatalf("a second before the end: %v", err)
	}
	clk.Advance(time.Second)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !errors.Is(err, cctp.ErrNotIndexed) {
		t.Fatalf("after five minutes: %v", err)
	}
}

// limited reports a rate_limited PROVIDER_UNAVAILABLE with secs seconds
// to wait.
func limited(err error, secs int64) bool {
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.ProviderUnavailable {
		return false
	}
	return fe.Details["reason"] == "rate_limited" && fe.Details["retryAfterSeconds"] == secs
}

// TestFailures: a server error and an unreachable service are
// PROVIDER_UNAVAILABLE (never "not indexed"); a malformed answer too; a
// body wrapped in data, as older pages answer, is read.
func TestFailures(t *testing.T) {
	sim, c, _ := service(t)
	ctx := context.Background()
	tx := cctp.Keccak256([]byte("tx"))
	sim.Inject(iristest.RouteMessages, iristest.Fault{Status: http.StatusInternalServerError}, 1)
	if _, err := c.Messages(ctx, cctp.DomainBase, tx); !fault.Is(err, fault.ProviderUnavailable) || errors.Is(err, cctp.ErrNotIndexed) {
		t.Fatalf("500: %v", err)
	}
	tiers, err := c.Fees(ctx, cctp.DomainBase, cctp.DomainSolana)
	if err != nil || len(tiers) != 2 || tiers[0].FinalityThreshold != 1000 || tiers[0].MinimumFee != "1" || tiers[1].FinalityThreshold != 2000 {
		t.Fatalf("fees: %+v, %v", tiers, err)
	}

	answer := `{"data":{"messages":[{"message":"0x01","attestation":"PENDING","status":"pending","eventNonce":""}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/burn/USDC/fees/6/5" {
			_, _ = w.Write([]byte(`{"data":[{"finalityThreshold":2000,"minimumFee":0.5}]}`))
			return
		}
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	raw, err := iris.New(iris.Config{BaseURL: srv.URL, HTTPClient: urlguardtest.Client(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := raw.Messages(ctx, cctp.DomainBase, tx)
	if err != nil || len(msgs) != 1 || string(msgs[0].Message) != "\x01" || msgs[0].Status != cctp.AttestationPending {
		t.Fatalf("data-wrapped messages: %+v, %v", msgs, err)
	}
	if tiers, err := raw.Fees(ctx, cctp.DomainBase, cctp.DomainSolana); err != nil || len(tiers) != 1 || tiers[0].MinimumFee != "0.5" {
		t.Fatalf("data-wrapped fees: %+v, %v", tiers, err)
	}
	answer = `{"messages":[{"message":"not hex","status":"complete","attestation":"0x00"}]}`
	if _, err := raw.Messages(ctx, cctp.DomainBase, tx); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("malformed message: %v", err)
	}
	srv.Close()
	if _, err := raw.Messages(ctx, cctp.DomainBase, tx); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("unreachable: %v", err)
	}
}

// TestNewGuardsTheURL: without a client of its own the adapter takes the
// URL guard's, which refuses a loopback base URL.
func TestNewGuardsTheURL(t *testing.T) {
	sim, _, _ := service(t)
	if _, err := iris.New(iris.Config{BaseURL: sim.URL()}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("loopback base URL: %v", err)
	}
	if _, err := iris.New(iris.Config{BaseURL: iris.SandboxURL}); err != nil {
		t.Fatalf("the sandbox URL: %v", err)
	}
}
