package transport

import (
	"context"
	"fmt"
	"net/http"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Endpoints outside the JSON gateway that take the platform's credentials
// (the realtime endpoint's WebSocket upgrade) authenticate and authorize
// through the gateway's own steps, so that they accept and refuse exactly
// what a route of the same policy would.

// Admit authenticates r for rt as the gateway authenticates a call of rt:
// the requested environment, the credential (an API key or access token as
// Authorization: Bearer, else the session cookie), its state and expiry,
// the workspace authority and rt's access rules and Policy. The
// credential's limits then admit it as one request, whose hold is released
// before Admit returns (a long-lived connection does not hold a concurrent
// request slot). It sets the headers the gateway sets (WWW-Authenticate on
// a 401, the RateLimit headers) on w, and returns the principal or the
// error the gateway would answer with.
func (g *Gateway[T]) Admit(ctx context.Context, w http.ResponseWriter, r *http.Request, rt Route[T]) (*access.Principal, error) {
	c := &Call[T]{RequestID: RequestID(r), Request: r, fields: &fieldIndex{}}
	if err := g.authenticate(ctx, r, rt, c, w, g.DB.Read()); err != nil {
		return nil, err
	}
	hd, err := g.limit(ctx, w, c)
	if err != nil {
		return nil, err
	}
	hd.release()
	return c.Principal, nil
}

// Reauthenticate is Admit without the limits, for a long-lived
// connection's re-check of the credential it was admitted with: r carries
// that credential again (its Authorization or Cookie header). It reads the
// credential and the authority as they are now, on every host exact, and
// returns the principal or the error a new request would get.
func (g *Gateway[T]) Reauthenticate(ctx context.Context, r *http.Request, rt Route[T]) (*access.Principal, error) {
	c := &Call[T]{RequestID: RequestID(r), Request: r, fields: &fieldIndex{}}
	if err := g.authenticate(ctx, r, rt, c, discardWriter{}, g.DB.Read()); err != nil {
		return nil, err
	}
	return c.Principal, nil
}

// Read answers a read of rt for p, a principal authenticated earlier, as a
// direct GET of rt with the path values would be answered: the route's
// access is evaluated as Authorize does (authority as of now), then its
// handler runs on the read pool. It returns the handler's data, or the
// error the GET would answer with (so a record another workspace holds is
// NOT_FOUND whether the route's policy or its handler finds that out). No
// limits, receipt or usage: the caller's own request counted.
func (g *Gateway[T]) Read(ctx context.Context, rt Route[T], p *access.Principal, path map[string]string) (any, error) {
	const op = "transport.Read"
	if rt.Method != http.MethodGet || rt.Handle == nil {
		return nil, fault.Wrap(op, fmt.Errorf("route %s is not a gateway read", rt.OperationID))
	}
	a, err := g.Authorize(ctx, rt, p, path, nil)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, rt.Method, rt.Pattern, http.NoBody)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	for k, v := range path {
		r.SetPathValue(k, v)
	}
	c := &Call[T]{Principal: p, Authority: a, Request: r, fields: &fieldIndex{}, Tx: g.DB.Read()}
	return rt.Handle(ctx, c)
}

// discardWriter takes the headers a re-check would set, for nobody.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
