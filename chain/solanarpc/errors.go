package solanarpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/creatormusic/platform/chain"
)

// errMalformed is the cause of an unavailable error for an answer the
// adapter could not use.
var errMalformed = errors.New("malformed answer")

// HTTPStatusError is the cause kept (errors.As) when the endpoint answered
// an HTTP status outside 2xx. It always comes wrapped with
// chain.ErrUnavailable.
type HTTPStatusError struct {
	// StatusCode is the HTTP status code.
	StatusCode int
}

// Error implements error.
func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("http status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// statusCheckingClient turns every HTTP status outside 2xx into an error,
// whatever the body holds, so a 429 or 503 reads as unavailability and
// never as an answer. It sends the endpoint URL's user info, if any, as a
// Basic Authorization header.
type statusCheckingClient struct {
	hc   *http.Client
	user *url.Userinfo
}

func (s statusCheckingClient) Do(req *http.Request) (*http.Response, error) {
	if s.user != nil && req.Header.Get("Authorization") == "" {
		pw, _ := s.user.Password()
		req.SetBasicAuth(s.user.Username(), pw)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		return nil, &HTTPStatusError{StatusCode: resp.StatusCode}
	}
	return resp, nil
}

func (s statusCheckingClient) CloseIdleConnections() { s.hc.CloseIdleConnections() }

// unavailableError is a call that reached no usable answer. Its text is
// scrubbed of the endpoint URL; it unwraps to chain.ErrUnavailable and to
// the first URL-free error of the cause's chain.
type unavailableError struct {
	msg   string
	cause error
}

func (e *unavailableError) Error() string { return e.msg }

func (e *unavailableError) Unwrap() []error {
	if e.cause == nil {
		return []error{chain.ErrUnavailable}
	}
	return []error{chain.ErrUnavailable, e.cause}
}

// fail maps an error from the rpc client: a JSON-RPC error object becomes a
// *chain.RPCError, anything else an unavailable error.
func (c *Client) fail(method string, err error) error {
	var rerr *jsonrpc.RPCError
	if errors.As(err, &rerr) {
		return toRPCError(method, rerr)
	}
	detail := c.redact(err.Error())
	if errors.Is(err, context.DeadlineExceeded) {
		detail = "timed out: " + detail
	}
	return &unavailableError{
		msg:   fmt.Sprintf("solanarpc: %s on %s: %s: %s", method, c.origin, chain.ErrUnavailable, detail),
		cause: c.urlFreeCause(err),
	}
}

// malformed is an unavailable error for an answer that decoded but cannot
// be used.
func (c *Client) malformed(method, detail string) error {
	return &unavailableError{
		msg:   fmt.Sprintf("solanarpc: %s on %s: %s: %s: %s", method, c.origin, chain.ErrUnavailable, errMalformed, c.redact(detail)),
		cause: errMalformed,
	}
}

// urlRE matches a URL as net/http and solana-go write one into error text.
var urlRE = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s"'<>]*`)

// redact replaces every URL in s by the endpoint's scheme and host, and
// scrubs the URL's secret-bearing parts wherever else they appear.
func (c *Client) redact(s string) string {
	s = urlRE.ReplaceAllString(s, c.origin)
	for _, secret := range c.secrets {
		s = strings.ReplaceAll(s, secret, "<redacted>")
	}
	return s
}

// urlFreeCause walks err's chain and returns the first error whose text
// holds neither a URL nor a secret part of the endpoint, so that errors.Is
// and errors.As still reach context.DeadlineExceeded, a *net.OpError or an
// *HTTPStatusError without exposing the URL through Error().
func (c *Client) urlFreeCause(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if c.redact(e.Error()) == e.Error() {
			return e
		}
	}
	return nil
}

// toRPCError converts solana-go's JSON-RPC error to the shared one, with
// NumSlotsBehind taken from data.numSlotsBehind when it is a u64 and Data
// the error's data as compact JSON ("" when absent or null).
func toRPCError(method string, e *jsonrpc.RPCError) *chain.RPCError {
	re := &chain.RPCError{Method: method, Code: e.Code, Message: e.Message, Data: dataJSON(e.Data)}
	if data, ok := e.Data.(map[string]any); ok {
		if n, ok := asU64(data["numSlotsBehind"]); ok {
			re.NumSlotsBehind = &n
		}
	}
	return re
}

// dataJSON re-encodes an error's data as compact JSON. solana-go decodes
// it with UseNumber, so numbers keep their digits; object keys come out
// sorted and HTML characters unescaped. Data that cannot be encoded (it
// always can, having been decoded from JSON) gives "".
func dataJSON(v any) string {
	if v == nil {
		return ""
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// asU64 reads a JSON number (json.Number with UseNumber, float64
// otherwise) that must be a non-negative integer within u64.
func asU64(v any) (uint64, bool) {
	switch n := v.(type) {
	case json.Number:
		u, err := strconv.ParseUint(string(n), 10, 64)
		return u, err == nil
	case float64:
		if n < 0 || n != math.Trunc(n) || n >= math.MaxUint64 {
			return 0, false
		}
		return uint64(n), true
	case int64:
		if n < 0 {
			return 0, false
		}
		return uint64(n), true
	case uint64:
		return n, true
	case int:
		if n < 0 {
			return 0, false
		}
		return uint64(n), true
	}
	return 0, false
}
