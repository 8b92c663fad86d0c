package x402test_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/x402/x402test"
)

// counting is a facilitator that settles everything and counts it.
type counting struct {
	mu      sync.Mutex
	settles int
}

func (c *counting) Name() string { return "counting" }
func (c *counting) Supported(context.Context) (x402.Supported, error) {
	return x402.Supported{Kinds: []x402.SupportedKind{}}, nil
}
func (c *counting) Verify(context.Context, x402.VerifyRequest) (x402.VerifyResponse, error) {
	return x402.VerifyResponse{IsValid: true}, nil
}
func (c *counting) Settle(_ context.Context, r x402.SettleRequest) (x402.SettleResponse, error) {
	c.mu.Lock()
	c.settles++
	c.mu.Unlock()
	return x402.SettleResponse{Success: true, Transaction: "sig", Network: r.Requirements.Network}, nil
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestDuplicateGuard: the same transaction is settled once within the
// window and refused with duplicate_settlement, then settled again once
// the window has passed.
func TestDuplicateGuard(t *testing.T) {
	f, clk := &counting{}, &clock{t: time.Unix(1_000_000, 0)}
	s, err := x402test.New(x402test.Config{Facilitator: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	settle := func(tx string) x402.SettleResponse {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"x402Version": 2, "paymentPayload": x402.PaymentPayload{X402Version: 2,
			Payload: json.RawMessage(`{"transaction":"` + tx + `"}`)}, "paymentRequirements": x402.Requirements{Network: "solana:n"}})
		res, err := http.Post(s.URL()+x402test.PathSettle, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out x402.SettleResponse
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("settle: %d %v", res.StatusCode, err)
		}
		return out
	}
	if r := settle("AAAA"); !r.Success {
		t.Fatalf("first settle %+v", r)
	}
	if r := settle("AAAA"); r.Success || r.ErrorReason != x402.ReasonDuplicate {
		t.Fatalf("second settle %+v", r)
	}
	if r := settle("BBBB"); !r.Success {
		t.Fatalf("another transaction %+v", r)
	}
	clk.Advance(x402test.DefaultDuplicateWindow + time.Second)
	if r := settle("AAAA"); !r.Success {
		t.Fatalf("after the window %+v", r)
	}
	if f.settles != 3 || s.Calls(x402test.PathSettle) != 4 {
		t.Fatalf("%d settlements, %d calls", f.settles, s.Calls(x402test.PathSettle))
	}
}
