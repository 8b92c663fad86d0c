package platform

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// RealtimeConfig configures the realtime endpoint, GET /ws/v1, and the
// feed behind it (package realtime). Zero values take the defaults of
// realtime.Config and api.RealtimeConfig; the OpenAPI document states the
// values in force.
type RealtimeConfig struct {
	// AllowedOrigins are origins (scheme://host[:port]) whose pages may
	// connect with the session cookie, beside the endpoint's own host and
	// Config.BaseURL's origin (the web app).
	AllowedOrigins []string
	// PollInterval is how often each host reads the outbox for events
	// committed elsewhere (a local commit wakes it at once).
	PollInterval time.Duration
	// QueueSize is a connection's queue of unsent messages; a client that
	// lets it fill is dropped (close code 4008).
	QueueSize int
	// MaxConnectionsPerKey and MaxConnectionsPerWorkspace bound the open
	// connections of one API key and of one workspace on each host.
	MaxConnectionsPerKey, MaxConnectionsPerWorkspace int
	// MaxSubscriptions bounds one connection's subscriptions.
	MaxSubscriptions int
	// ReadLimit bounds one client message, in bytes.
	ReadLimit int64
	// PingInterval spaces the server's pings; PongTimeout is how long one
	// waits for its pong.
	PingInterval, PongTimeout time.Duration
	// RecheckInterval spaces the periodic re-check of each connection's
	// credential and subscriptions (events that change a key or a project
	// member trigger one at once).
	RecheckInterval time.Duration
}

// buildRealtime builds the host's realtime feed and endpoint. The hub
// starts in startRealtime; the endpoint is bound to the gateway once the route
// table exists.
func (p *Platform) buildRealtime(cfg Config) error {
	rc := cfg.Realtime
	hub, err := realtime.New(realtime.Config{ReadFunc: store.Reader[realtime.Store](p.db), PollInterval: rc.PollInterval,
		QueueSize: rc.QueueSize, MaxConnectionsPerKey: rc.MaxConnectionsPerKey, MaxConnectionsPerWorkspace: rc.MaxConnectionsPerWorkspace,
		MaxSubscriptions: rc.MaxSubscriptions, Log: p.log})
	if err != nil {
		return fmt.Errorf("platform: realtime: %w", err)
	}
	origins := append([]string(nil), rc.AllowedOrigins...)
	base := cfg.BaseURL
	if base == "" {
		base = account.DefaultBaseURL
	}
	if u, err := url.Parse(base); err == nil && u.Scheme != "" && u.Host != "" {
		origins = append(origins, u.Scheme+"://"+u.Host)
	}
	ep, err := api.NewRealtime(api.RealtimeConfig{Hub: hub, AllowedOrigins: origins, ReadLimit: rc.ReadLimit,
		PingInterval: rc.PingInterval, PongTimeout: rc.PongTimeout, RecheckInterval: rc.RecheckInterval, Log: p.log})
	if err != nil {
		return fmt.Errorf("platform: Config.Realtime: %w", err)
	}
	p.hub, p.realtime = hub, ep
	return nil
}

// startRealtime runs the hub until bg ends, woken by this host's commits
// of outbox events.
func (p *Platform) startRealtime(bg context.Context) {
	stop := p.db.WatchOutbox(p.hub.Wake)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer stop()
		p.hub.Run(bg)
	}()
}

// Realtime returns the host's realtime feed (tests and benchmarks read
// its connection count).
func (p *Platform) Realtime() *realtime.Hub { return p.hub }
