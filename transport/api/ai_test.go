package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/transport"
)

// TestAIRoutesArePreviewAndDeclareTheirAuthority: the family stays
// Preview until released; reads admit any member (the public family) or
// super_admin (administration); every write needs super_admin, a session,
// a recent sign-in and takes an Idempotency-Key.
func TestAIRoutesArePreviewAndDeclareTheirAuthority(t *testing.T) {
	svc, err := ai.New(ai.Config{})
	if err != nil {
		t.Fatal(err)
	}
	routes := aiRoutes(svc)
	if len(routes) != 11 {
		t.Fatalf("%d AI routes, want the 11 of the registry and routing", len(routes))
	}
	for _, rt := range routes {
		name := rt.Method + " " + rt.Pattern
		if rt.Maturity != transport.Preview || rt.Tag != transport.TagAI || !rt.Private {
			t.Errorf("%s: maturity %q, tag %q, private %v", name, rt.Maturity, rt.Tag, rt.Private)
		}
		adminPath := strings.HasPrefix(rt.Pattern, "/api/v1/admin/ai")
		switch {
		case rt.Method != http.MethodGet:
			if !rt.SuperAdmin || rt.Auth != transport.AuthSession || rt.Policy.Fresh != transport.FreshSession ||
				rt.Idempotency != transport.IdempotencyOptional || rt.AnyMember {
				t.Errorf("%s: a write must need super_admin, a fresh session and take an Idempotency-Key: %+v", name, rt)
			}
		case adminPath:
			if !rt.SuperAdmin || rt.AnyMember || rt.Auth != transport.AuthSession {
				t.Errorf("%s: an administration read must need super_admin", name)
			}
		default:
			if rt.SuperAdmin || !rt.AnyMember || rt.Auth != transport.AuthSessionOrKey {
				t.Errorf("%s: a registry read must admit any member", name)
			}
		}
	}
}

// TestAIHealthViewIsHonest: a model never observed reports no latency,
// no observation time and no cooldown; an ended cooldown is not shown.
func TestAIHealthViewIsHonest(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := aiHealthView(ai.Health{Environment: access.Live, ModelID: "m"}, now)
	if v.Status != "unobserved" || v.LatencyMs != nil || v.LastLatencyMs != nil || v.ObservedAt != nil || v.LastFailure != nil ||
		v.CooldownUntil != nil || v.LastSuccessAt != nil {
		t.Fatalf("unobserved view = %+v", v)
	}
	h := ai.Health{Environment: access.Live, ModelID: "m", ConsecutiveFailures: 3, Failures: 3, LastFailure: ai.OutcomeServer,
		LastFailureAt: now.Add(-2 * time.Minute), CooldownUntil: now.Add(-time.Minute), CooldownCause: ai.OutcomeServer, Version: 3,
		UpdatedAt: now.Add(-2 * time.Minute)}
	v = aiHealthView(h, now)
	if v.Status != "degraded" || v.CooldownUntil != nil || v.CooldownCause != nil || v.LastFailure == nil || *v.LastFailure != "server" {
		t.Fatalf("after the cooldown = %+v", v)
	}
}
