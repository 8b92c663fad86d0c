package chaintest

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
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

type activeFault struct {
	Fault
	left int // calls left; <0 = unlimited
}

// Inject adds f. Faults apply in the order injected: for each call, every
// matching fault's Delay is served (and the fault used up) until the first
// matching fault that answers with an error or HTTP status, which is used
// up and decides the answer.
func (c *Cluster) Inject(f Fault) {
	af := &activeFault{Fault: f, left: f.Times}
	if f.Times <= 0 {
		af.left = -1
	}
	c.faultMu.Lock()
	c.faults = append(c.faults, af)
	c.hasFaults.Store(true)
	c.faultMu.Unlock()
}

// ClearFaults removes every injected fault.
func (c *Cluster) ClearFaults() {
	c.faultMu.Lock()
	c.faults = nil
	c.hasFaults.Store(false)
	c.faultMu.Unlock()
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
	if !c.hasFaults.Load() {
		return p
	}
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	kept := c.faults[:0]
	stop := false
	for _, f := range c.faults {
		if !stop && (f.Method == "" || f.Method == method) {
			p.delay += f.Delay
			if f.terminal() {
				ff := f.Fault
				p.fault = &ff
				stop = true
			}
			if f.left > 0 {
				f.left--
				if f.left == 0 {
					continue
				}
			}
		}
		kept = append(kept, f)
	}
	clear(c.faults[len(kept):])
	c.faults = kept
	c.hasFaults.Store(len(kept) > 0)
	return p
}

// wait holds for d, returning early with an error when ctx ends or the
// cluster closes.
func (c *Cluster) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return fmt.Errorf("chaintest: cluster closed")
	}
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
