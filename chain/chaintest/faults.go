package chaintest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
)

// Fault is a misbehaviour injected into the cluster's answers to a method,
// over HTTP and in process alike.
type Fault struct {
	Method     string        // JSON-RPC method; "" = every method
	Times      int           // calls it applies to; 0 = until ClearFaults
	Code       int           // when non-zero: answer this JSON-RPC error code
	Message    string        // the error message with Code
	Data       any           // the error data with Code; nil = none
	Behind     uint64        // when non-zero: answer -32005 "Node is behind by N slots", data {"numSlotsBehind":N}
	Delay      time.Duration // hold the answer this long first (timeouts); honours the request context
	HTTPStatus int           // when non-zero: answer this bare HTTP status, no JSON-RPC body
}

// terminal reports whether f replaces the answer (rather than only
// delaying it).
func (f Fault) terminal() bool { return f.Code != 0 || f.Behind != 0 || f.HTTPStatus != 0 }

// Inject adds f. Faults apply in the order injected: for each call, every
// matching fault's Delay is served (and the fault used up) until the first
// matching fault that answers with an error or HTTP status, which is used
// up and decides the answer.
func (c *Cluster) Inject(f Fault) {
	c.faults.Add(f.Method, f, f.Times)
}

// ClearFaults removes every injected fault.
func (c *Cluster) ClearFaults() {
	c.faults.Clear()
}

// Calls is how many calls of method the cluster received, over HTTP and in
// process, including those a fault answered.
func (c *Cluster) Calls(method string) int {
	v, ok := c.calls.Load(method)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int64).Load())
}

func (c *Cluster) countCall(method string) {
	v, ok := c.calls.Load(method)
	if !ok {
		v, _ = c.calls.LoadOrStore(method, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// plan is what the faults do to one call.
type plan struct {
	delay time.Duration
	fault *Fault // the terminal fault, if any
}

// takeFaults uses up the faults matching method and returns their effect.
func (c *Cluster) takeFaults(method string) plan {
	var p plan
	if c.faults.Len() == 0 {
		return p
	}
	c.faults.Take(method, func(f Fault) bool {
		p.delay += f.Delay
		if f.terminal() {
			p.fault = &f
			return false
		}
		return true
	})
	return p
}

// wait holds for d, returning early with an error when ctx ends or the
// cluster closes.
func (c *Cluster) wait(ctx context.Context, d time.Duration) error {
	err := c.run.Sleep(ctx, d)
	if errors.Is(err, simctl.ErrStopped) {
		return fmt.Errorf("chaintest: cluster closed")
	}
	return err
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// behindError is -32005 for a node n slots behind.
func behindError(n uint64) *rpcError {
	return &rpcError{Code: -32005, Message: fmt.Sprintf("Node is behind by %d slots", n), Data: map[string]any{"numSlotsBehind": n}}
}

// faultError is the JSON-RPC error a terminal fault answers, or nil for an
// HTTP-status fault.
func faultError(f *Fault) *rpcError {
	switch {
	case f.HTTPStatus != 0:
		return nil
	case f.Behind != 0:
		return behindError(f.Behind)
	default:
		return &rpcError{Code: f.Code, Message: f.Message, Data: f.Data}
	}
}
