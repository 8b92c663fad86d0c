package jupitertest

import (
	"net/http"
	"time"
)

// The paths the simulator serves, the keys of Fault.Path and Calls.
const (
	PathQuote            = "/quote"
	PathSwapInstructions = "/swap-instructions"
)

// Fault is a misbehaviour injected into the simulator's answers to a
// path. Delay, DynamicSwap and SimulationError shape an answer; Status,
// Body and RateLimit replace it.
type Fault struct {
	// Path is PathQuote or PathSwapInstructions; "" means every path.
	Path string
	// Times is how many calls it applies to; 0 means until ClearFaults.
	Times int

	// Delay holds the answer this long first (a client with a shorter
	// deadline times out). It honours the request's context.
	Delay time.Duration

	// Status, when non-zero, answers this HTTP status with Body, or with
	// {"error": Message, "errorCode": ErrorCode} when Body is empty.
	Status int
	// ErrorCode and Message make the error body; an empty ErrorCode is
	// left out of it.
	ErrorCode, Message string
	// Body, when set, is sent as is (status Status, or 200 when Status is
	// zero): a malformed or oversized answer.
	Body string
	// RateLimit, when set, answers 429 "[API Gateway] Too many requests"
	// with its headers.
	RateLimit *RateLimit

	// DynamicSwap makes a quote carry undocumented fields: its step's
	// swapInfo gets a details object with dynamicSwapV2, and the answer
	// gets top-level fields no schema lists. The quote must then be posted
	// back byte for byte: a re-serialized one without the details object
	// is refused with 500 "Dynamic swap is missing dynamic swap details".
	DynamicSwap bool
	// SimulationError, when set, is the simulationError of a
	// /swap-instructions answer (the instructions are still sent).
	SimulationError *SimulationError
}

// RateLimit is the gateway's rate-limit headers on a 429.
type RateLimit struct {
	// Remaining is x-ratelimit-remaining (may be zero or negative).
	Remaining int64
	// Current is x-ratelimit-current.
	Current int64
	// Reset is x-ratelimit-reset, in Unix seconds.
	Reset int64
}

// SimulationError is a /swap-instructions simulationError.
type SimulationError struct {
	// ErrorCode is its errorCode, such as "TRANSACTION_ERROR".
	ErrorCode string
	// Message is its error text.
	Message string
}

// terminal reports whether f replaces the answer.
func (f Fault) terminal() bool { return f.Status != 0 || f.Body != "" || f.RateLimit != nil }

// The constructors below return faults that apply until ClearFaults; set
// Times to limit them.

// NoRoute is the quote fault of a pair without route: 400 with errorCode
// code (COULD_NOT_FIND_ANY_ROUTE when empty; NO_ROUTES_FOUND,
// TOKEN_NOT_TRADABLE...) and the message Jupiter sends with it.
func NoRoute(code string) Fault {
	msg := map[string]string{
		"":                               "Could not find any route",
		"COULD_NOT_FIND_ANY_ROUTE":       "Could not find any route",
		"NO_ROUTES_FOUND":                "No routes found",
		"TOKEN_NOT_TRADABLE":             "The token is not tradable",
		"CIRCULAR_ARBITRAGE_IS_DISABLED": "Circular arbitrage is disabled",
	}[code]
	if code == "" {
		code = "COULD_NOT_FIND_ANY_ROUTE"
	}
	if msg == "" {
		msg = code
	}
	return Fault{Path: PathQuote, Status: http.StatusBadRequest, ErrorCode: code, Message: msg}
}

// TooManyRequests is a 429 on path with the given headers.
func TooManyRequests(path string, rl RateLimit) Fault {
	return Fault{Path: path, RateLimit: &rl}
}

// ServerError is a status (a 5xx) on path with the body {"error": its
// status text}.
func ServerError(path string, status int) Fault {
	return Fault{Path: path, Status: status, Message: http.StatusText(status)}
}

// Slow delays the answers on path by d.
func Slow(path string, d time.Duration) Fault {
	return Fault{Path: path, Delay: d}
}

// Inject queues f. Faults apply in the order injected: for each call,
// every matching fault that only shapes the answer (Delay, DynamicSwap,
// SimulationError) is used up and applied until the first matching fault
// that replaces the answer, which is used up and decides it.
func (s *Server) Inject(f Fault) {
	s.faults.Add(f.Path, f, f.Times)
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() { s.faults.Clear() }

// plan is what the faults do to one call.
type plan struct {
	delay       time.Duration
	dynamicSwap bool
	simulation  *SimulationError
	fault       *Fault // the replacing fault, if any
}

// takeFaults uses up the faults matching path and returns their effect.
func (s *Server) takeFaults(path string) plan {
	var p plan
	if s.faults.Len() == 0 {
		return p
	}
	s.faults.Take(path, func(f Fault) bool {
		p.delay += f.Delay
		p.dynamicSwap = p.dynamicSwap || f.DynamicSwap
		if f.SimulationError != nil {
			se := *f.SimulationError
			p.simulation = &se
		}
		if f.terminal() {
			p.fault = &f
			return false
		}
		return true
	})
	return p
}
