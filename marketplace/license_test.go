package marketplace_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
)

// seller is a store with a rights policy of ws_1 in two versions and two
// assets of ws_1 (one by usr_1, one by usr_9) and one of ws_2.
func seller(t *testing.T) (*memStore, marketplace.RightsPolicy, marketplace.RightsPolicy) {
	t.Helper()
	ctx := context.Background()
	st := newMemStore()
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	svc := marketplace.New(marketplace.Config{})
	v1, _, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: standardRules()})
	if err != nil {
		t.Fatal(err)
	}
	r2 := standardRules()
	r2.Modification = marketplace.Prohibited
	v2, _, err := svc.PublishRights(ctx, st, p, a, marketplace.PublishRequest{Name: "standard", Rules: r2})
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range map[string]asset.Asset{
		"ast_mine":   {Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"}, CreatedBy: asset.Creator{UserID: "usr_1"}},
		"ast_hers":   {Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"}, CreatedBy: asset.Creator{UserID: "usr_9"}},
		"ast_theirs": {Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: "test"}, CreatedBy: asset.Creator{UserID: "usr_2"}},
		"ast_live":   {Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "live"}, CreatedBy: asset.Creator{UserID: "usr_1"}},
	} {
		a.ID = id
		st.assets[id] = a
	}
	st.audits, st.events = nil, nil
	return st, v1, v2
}

func offerOf(assetID string, ref policy.Ref) marketplace.OfferRequest {
	return marketplace.OfferRequest{AssetID: assetID, Rights: ref, Name: "Sync license", Kind: marketplace.KindNonExclusive, RequestID: "req_1"}
}

// TestOfferLicense: an offer on an own asset under an earlier version of
// a rights policy is active, quotes that version, and writes its event
// and audit record.
func TestOfferLicense(t *testing.T) {
	ctx := context.Background()
	st, v1, _ := seller(t)
	p, a := member("usr_1", "ws_1", access.RoleCreator)
	o, err := marketplace.New(marketplace.Config{}).OfferLicense(ctx, st, p, a, offerOf("ast_mine", v1.Ref))
	if err != nil {
		t.Fatal(err)
	}
	if o.State != marketplace.StateActive || o.Version != 1 || o.Rights != v1.Ref || o.AssetID != "ast_mine" ||
		o.CreatedByUserID != "usr_1" || o.Scope != p.Scope() || !strings.HasPrefix(o.ID, marketplace.OfferPrefix) {
		t.Fatalf("offer = %+v", o)
	}
	if len(st.events) != 1 || st.events[0].Type != marketplace.EventLicenseOffered || st.events[0].AggregateID != o.ID ||
		st.events[0].Environment != "test" {
		t.Fatalf("events = %+v", st.events)
	}
	var payload struct {
		AssetID      string     `json:"assetId"`
		RightsPolicy policy.Ref `json:"rightsPolicy"`
		State        string     `json:"state"`
	}
	if err := json.Unmarshal(st.events[0].Payload, &payload); err != nil || payload.RightsPolicy != v1.Ref ||
		payload.AssetID != "ast_mine" || payload.State != "active" {
		t.Fatalf("payload = %s (%v)", st.events[0].Payload, err)
	}
	if len(st.audits) != 1 || st.audits[0].Action != marketplace.ActionLicenseOffered || st.audits[0].TargetID != o.ID {
		t.Fatalf("audits = %+v", st.audits)
	}
}

// TestOfferRefusals: each refusal has its own code and field, and none
// writes anything.
func TestOfferRefusals(t *testing.T) {
	ctx := context.Background()
	st, v1, v2 := seller(t)
	svc := marketplace.New(marketplace.Config{})
	owner, oa := member("usr_1", "ws_1", access.RoleOwner)
	creator, ca := member("usr_1", "ws_1", access.RoleCreator)
	other, ta := member("usr_2", "ws_2", access.RoleOwner)
	wrongHash := v1.Ref
	wrongHash.Hash = v2.Ref.Hash
	cases := []struct {
		name    string
		p       *access.Principal
		a       *access.Authority
		in      marketplace.OfferRequest
		code    fault.Code
		details map[string]any
	}{
		{"another workspace's asset", owner, oa, offerOf("ast_theirs", v1.Ref), fault.NotFound, map[string]any{"field": "assetId"}},
		{"the other environment's asset", owner, oa, offerOf("ast_live", v1.Ref), fault.NotFound, map[string]any{"field": "assetId"}},
		{"a missing asset", owner, oa, offerOf("ast_none", v1.Ref), fault.NotFound, map[string]any{"field": "assetId"}},
		{"an unknown version", owner, oa, offerOf("ast_mine", policy.Ref{ID: v1.Ref.ID, Version: 3, Hash: v1.Ref.Hash}),
			fault.NotFound, map[string]any{"field": "policyVersion"}},
		{"an unknown policy", owner, oa, offerOf("ast_mine", policy.Ref{ID: "rights.ws_1.exclusive", Version: 1, Hash: v1.Ref.Hash}),
			fault.NotFound, map[string]any{"field": "policyId"}},
		{"another workspace's policy", other, ta, offerOf("ast_theirs", v1.Ref), fault.NotFound, map[string]any{"field": "policyId"}},
		{"a terms hash of another version", owner, oa, offerOf("ast_mine", wrongHash), fault.TermsMismatch,
			map[string]any{"field": "termsHash", "policyHash": v1.Ref.Hash}},
		{"a creator on another member's asset", creator, ca, offerOf("ast_hers", v1.Ref), fault.AccessDenied,
			map[string]any{"permission": "marketplace.create_listing"}},
		{"no asset", owner, oa, offerOf("", v1.Ref), fault.InvalidInput, map[string]any{"field": "assetId"}},
		{"version 0", owner, oa, offerOf("ast_mine", policy.Ref{ID: v1.Ref.ID, Hash: v1.Ref.Hash}), fault.InvalidInput,
			map[string]any{"field": "policyVersion"}},
		{"a short hash", owner, oa, offerOf("ast_mine", policy.Ref{ID: v1.Ref.ID, Version: 1, Hash: "abc"}), fault.InvalidInput,
			map[string]any{"field": "termsHash"}},
	}
	for _, c := range cases {
		_, err := svc.OfferLicense(ctx, st, c.p, c.a, c.in)
		wantFault(t, c.name, err, c.code, c.details)
	}
	for _, bad := range []struct {
		field string
		edit  func(in *marketplace.OfferRequest)
	}{
		{"name", func(in *marketplace.OfferRequest) { in.Name = "  " }},
		{"name", func(in *marketplace.OfferRequest) { in.Name = strings.Repeat("n", 101) }},
		{"kind", func(in *marketplace.OfferRequest) { in.Kind = "shared" }},
	} {
		in := offerOf("ast_mine", v1.Ref)
		bad.edit(&in)
		_, err := svc.OfferLicense(ctx, st, owner, oa, in)
		wantFault(t, bad.field, err, fault.InvalidInput, map[string]any{"field": bad.field})
	}
	if len(st.offers) != 0 || len(st.events) != 0 || len(st.audits) != 0 {
		t.Fatalf("refusals wrote %d offers, %d events, %d audits", len(st.offers), len(st.events), len(st.audits))
	}
	// An owner offers another member's asset.
	if _, err := svc.OfferLicense(ctx, st, owner, oa, offerOf("ast_hers", v2.Ref)); err != nil {
		t.Fatalf("owner on a member's asset: %v", err)
	}
}

// TestWithdrawLicense: active -> withdrawn once, with its event; a second
// withdrawal is INVALID_STATE_TRANSITION; another workspace finds nothing.
func TestWithdrawLicense(t *testing.T) {
	ctx := context.Background()
	st, v1, _ := seller(t)
	svc := marketplace.New(marketplace.Config{})
	p, a := member("usr_1", "ws_1", access.RoleCreator)
	o, err := svc.OfferLicense(ctx, st, p, a, offerOf("ast_mine", v1.Ref))
	if err != nil {
		t.Fatal(err)
	}
	other, ta := member("usr_2", "ws_2", access.RoleOwner)
	if _, err := svc.WithdrawLicense(ctx, st, other, ta, o.ID, ""); !fault.Is(err, fault.NotFound) {
		t.Fatalf("another workspace withdraws: %v", err)
	}
	peer, pa := member("usr_9", "ws_1", access.RoleCreator)
	wantFault(t, "another creator withdraws", func() error { _, err := svc.WithdrawLicense(ctx, st, peer, pa, o.ID, ""); return err }(),
		fault.AccessDenied, nil)
	w, err := svc.WithdrawLicense(ctx, st, p, a, o.ID, "req_2")
	if err != nil || w.State != marketplace.StateWithdrawn || w.Version != 2 || w.Rights != o.Rights {
		t.Fatalf("withdrawn = %+v, %v", w, err)
	}
	if last := st.events[len(st.events)-1]; last.Type != marketplace.EventLicenseWithdrawn || last.AggregateVersion != 2 {
		t.Fatalf("event = %+v", last)
	}
	_, err = svc.WithdrawLicense(ctx, st, p, a, o.ID, "")
	wantFault(t, "second withdrawal", err, fault.InvalidState, map[string]any{"from": "withdrawn", "event": "withdraw"})
	got, err := marketplace.License(ctx, st, p.Scope(), o.ID)
	if err != nil || got.State != marketplace.StateWithdrawn {
		t.Fatalf("read back = %+v, %v", got, err)
	}
}

// TestOfferTable pins the state table: active is withdrawn, nothing else
// moves.
func TestOfferTable(t *testing.T) {
	table := fsm.New("marketplace.Transition", "A license offer", marketplace.Moves())
	if err := table.Check(); err != nil {
		t.Fatal(err)
	}
	if err := table.Enforced(marketplace.Transition); err != nil {
		t.Fatal(err)
	}
	if to, err := marketplace.Transition(marketplace.StateActive, marketplace.EventWithdraw); err != nil || to != marketplace.StateWithdrawn {
		t.Fatalf("active on withdraw = %s, %v", to, err)
	}
	if _, err := marketplace.Transition(marketplace.StateWithdrawn, marketplace.EventWithdraw); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("withdrawn on withdraw: %v", err)
	}
}

// TestProvenanceRead: the asset's workspace reads the record; another
// workspace reads it only with an entitlement to the asset; the other
// environment reads nothing.
func TestProvenanceRead(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	rec := asset.Provenance{AssetID: "ast_1", Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"},
		Origin: asset.Uploaded, OutputSHA256: "ab", Basis: asset.BasisCreation}
	st.provenance["ast_1"] = rec
	svc := marketplace.New(marketplace.Config{})
	own, _ := member("usr_1", "ws_1", access.RoleViewer)
	if got, err := svc.Provenance(ctx, st, own, "ast_1"); err != nil || got.AssetID != "ast_1" {
		t.Fatalf("own workspace: %+v, %v", got, err)
	}
	other, _ := member("usr_2", "ws_2", access.RoleOwner)
	if _, err := svc.Provenance(ctx, st, other, "ast_1"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("another workspace: %v", err)
	}
	live := *own
	live.Environment = access.Live
	if _, err := svc.Provenance(ctx, st, &live, "ast_1"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("the other environment: %v", err)
	}
	st.entitled["ws_2/ast_1"] = true
	if got, err := svc.Provenance(ctx, st, other, "ast_1"); err != nil || got.AssetID != "ast_1" {
		t.Fatalf("an entitled workspace: %+v, %v", got, err)
	}
}
