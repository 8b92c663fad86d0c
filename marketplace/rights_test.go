package marketplace_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
)

func standardRules() marketplace.Rules {
	return marketplace.Rules{CommercialUse: marketplace.Allowed, Monetization: marketplace.Allowed,
		Redistribution: marketplace.RedistributionInDerivativeWorks, Modification: marketplace.Allowed,
		Attribution: marketplace.AttributionRequired, AttributionText: "Music by Ada", SourceResale: marketplace.Prohibited}
}

// wantFault fails unless err carries code and, for each key of details,
// that detail.
func wantFault(t *testing.T, what string, err error, code fault.Code, details map[string]any) {
	t.Helper()
	got, _, d := fault.Public(err)
	if got != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
	for k, v := range details {
		if d[k] != v {
			t.Fatalf("%s: details %v, want %s = %v", what, d, k, v)
		}
	}
}

// TestPublishRightsVersions: the same rules answer the same version and
// write nothing; changed rules make version+1, and the older version stays
// readable and unchanged; a revert is a new version.
func TestPublishRightsVersions(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	svc := marketplace.New(marketplace.Config{})
	p, a := member("usr_1", "ws_1", access.RoleCreator)
	r1 := standardRules()
	v1, created, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: r1, RequestID: "req_1"})
	if err != nil || !created || v1.Ref.Version != 1 || v1.Ref.ID != "rights.ws_1.standard" || v1.Name != "standard" || v1.Rules != r1 {
		t.Fatalf("first publish = %+v, %v, %v", v1, created, err)
	}
	again, created, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: r1})
	if err != nil || created || again.Ref != v1.Ref {
		t.Fatalf("same rules = %+v, created %v, %v", again.Ref, created, err)
	}
	if len(st.versions) != 1 || len(st.audits) != 1 {
		t.Fatalf("same rules wrote %d versions, %d audits", len(st.versions), len(st.audits))
	}
	r2 := r1
	r2.Monetization = marketplace.Prohibited
	v2, created, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: r2})
	if err != nil || !created || v2.Ref.Version != 2 || v2.Ref.Hash == v1.Ref.Hash {
		t.Fatalf("changed rules = %+v, %v, %v", v2.Ref, created, err)
	}
	old, err := marketplace.RightsVersion(ctx, st, p.Scope(), v1.Ref.ID, 1)
	if err != nil || old.Ref != v1.Ref || old.Rules != r1 {
		t.Fatalf("version 1 after version 2 = %+v, %v", old, err)
	}
	back, created, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: r1})
	if err != nil || !created || back.Ref.Version != 3 || back.Ref.Hash != v1.Ref.Hash {
		t.Fatalf("revert = %+v, %v, %v", back.Ref, created, err)
	}
	if a := st.audits[1]; a.Action != marketplace.ActionRightsPublished || a.TargetID != v1.Ref.ID || a.Before == nil {
		t.Fatalf("second audit = %+v", a)
	}
	// Another name is another policy; another workspace's is its own.
	other, _, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "exclusive", Rules: r1})
	if err != nil || other.Ref.Version != 1 || other.Ref.ID != "rights.ws_1.exclusive" {
		t.Fatalf("another name = %+v, %v", other.Ref, err)
	}
	q, b := member("usr_2", "ws_2", access.RoleOwner)
	theirs, _, err := svc.PublishRights(ctx, st, q, b, marketplace.PublishRequest{Name: "standard", Rules: r1})
	if err != nil || theirs.Ref.Version != 1 || theirs.Ref.ID != "rights.ws_2.standard" {
		t.Fatalf("another workspace = %+v, %v", theirs.Ref, err)
	}
	if _, err := marketplace.RightsVersion(ctx, st, q.Scope(), v1.Ref.ID, 1); !fault.Is(err, fault.NotFound) {
		t.Fatalf("another workspace reads ws_1's policy: %v", err)
	}
}

// TestRightsHashIsCanonical: the content hash is the SHA-256 of the rules'
// canonical JSON, computed here independently with the keys in sorted
// order, and the same whatever order the keys were written in.
func TestRightsHashIsCanonical(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	v, _, err := marketplace.New(marketplace.Config{}).PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: standardRules()})
	if err != nil {
		t.Fatal(err)
	}
	canonical := `{"attribution":"required","attributionText":"Music by Ada","commercialUse":"allowed","modification":"allowed",` +
		`"monetization":"allowed","redistribution":"in_derivative_works","sourceResale":"prohibited"}`
	sum := sha256.Sum256([]byte(canonical))
	if want := hex.EncodeToString(sum[:]); v.Ref.Hash != want {
		t.Fatalf("hash %s, want %s (SHA-256 of %s)", v.Ref.Hash, want, canonical)
	}
	shuffled := `{ "sourceResale":"prohibited", "redistribution":"in_derivative_works", "monetization":"allowed",
		"modification":"allowed", "commercialUse":"allowed", "attributionText":"Music by Ada", "attribution":"required" }`
	_, hash, err := policy.Canonicalize(json.RawMessage(shuffled))
	if err != nil || hash != v.Ref.Hash {
		t.Fatalf("shuffled keys hash %s (%v), want %s", hash, err, v.Ref.Hash)
	}
}

// TestRulesValidation: every rule is required and one of its values;
// contradictions name the field and the reason.
func TestRulesValidation(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	svc := marketplace.New(marketplace.Config{})
	cases := []struct {
		name   string
		edit   func(r *marketplace.Rules)
		field  string
		reason string
	}{
		{"missing commercial use", func(r *marketplace.Rules) { r.CommercialUse = "" }, "rules.commercialUse", ""},
		{"unknown monetization", func(r *marketplace.Rules) { r.Monetization = "sometimes" }, "rules.monetization", ""},
		{"unknown redistribution", func(r *marketplace.Rules) { r.Redistribution = "allowed_with_credit" }, "rules.redistribution", ""},
		{"missing modification", func(r *marketplace.Rules) { r.Modification = "" }, "rules.modification", ""},
		{"unknown attribution", func(r *marketplace.Rules) { r.Attribution = "optional" }, "rules.attribution", ""},
		{"missing source resale", func(r *marketplace.Rules) { r.SourceResale = "" }, "rules.sourceResale", ""},
		{"monetization without commercial use", func(r *marketplace.Rules) { r.CommercialUse = marketplace.Prohibited },
			"rules.monetization", "requires_commercial_use"},
		{"source resale without redistribution", func(r *marketplace.Rules) { r.SourceResale = marketplace.Allowed },
			"rules.sourceResale", "requires_redistribution"},
		{"credit line without attribution", func(r *marketplace.Rules) { r.Attribution = marketplace.AttributionNotRequired },
			"rules.attributionText", "attribution_not_required"},
		{"long credit line", func(r *marketplace.Rules) { r.AttributionText = strings.Repeat("x", 201) }, "rules.attributionText", ""},
		{"two-line credit", func(r *marketplace.Rules) { r.AttributionText = "Music\nby Ada" }, "rules.attributionText", ""},
	}
	for _, c := range cases {
		r := standardRules()
		c.edit(&r)
		_, _, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: r})
		want := map[string]any{"field": c.field}
		if c.reason != "" {
			want["reason"] = c.reason
		}
		wantFault(t, c.name, err, fault.InvalidInput, want)
	}
	for _, name := range []string{"", "Standard", "9lives", "a-b", strings.Repeat("a", 25), "rights.x"} {
		_, _, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: name, Rules: standardRules()})
		wantFault(t, "name "+name, err, fault.InvalidInput, map[string]any{"field": "name"})
	}
	// Allowed everywhere is consistent; the credit line is trimmed.
	r := marketplace.Rules{CommercialUse: marketplace.Allowed, Monetization: marketplace.Allowed,
		Redistribution: marketplace.RedistributionAllowed, Modification: marketplace.Allowed, Attribution: marketplace.AttributionRequired,
		AttributionText: "  Ada  ", SourceResale: marketplace.Allowed}
	v, _, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "open", Rules: r})
	if err != nil || v.Rules.AttributionText != "Ada" {
		t.Fatalf("open rules = %+v, %v", v.Rules, err)
	}
	if len(st.versions) != 1 {
		t.Fatalf("refused requests published %d versions", len(st.versions)-1)
	}
}

// TestPublishNeedsTheGrant: a VIEWER and a MEMBER hold no
// marketplace.create_listing and are refused with ACCESS_DENIED.
func TestPublishNeedsTheGrant(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	for _, role := range []access.Role{access.RoleViewer, access.RoleMember, access.RoleModerator} {
		p, a := member("usr_1", "ws_1", role)
		_, _, err := marketplace.New(marketplace.Config{}).PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: standardRules()})
		wantFault(t, string(role), err, fault.AccessDenied, map[string]any{"permission": "marketplace.create_listing"})
	}
	if len(st.versions) != 0 {
		t.Fatalf("refused publishers wrote %d versions", len(st.versions))
	}
}
