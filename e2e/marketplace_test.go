package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// seller is a signed-in user with a workspace, acting in test mode.
type seller struct {
	person
	tenantID, workspaceID string
}

// newSeller signs email up, onboards a workspace and puts it on planID in
// the test environment, with marketplace.sell when sell is set (as the
// studio plan's subscription does).
func newSeller(t *testing.T, s *platformtest.System, email, planID string, sell bool) seller {
	t.Helper()
	p := signIn(t, s, email, "Seller")
	ws := onboard(t, s, &p, "Seller Studio")
	sl := seller{person: p, tenantID: authContext(t, s, p.cookie).Tenant.ID, workspaceID: ws}
	onPlan(t, s, sl.tenantID, ws, planID, sell)
	return sl
}

// onPlan assigns planID to the workspace in the test environment and sets
// its marketplace.sell entitlement there.
func onPlan(t *testing.T, s *platformtest.System, tenantID, ws, planID string, sell bool) {
	t.Helper()
	ctx := context.Background()
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.WorkspacePlanSet(ctx, plan.Assignment{TenantID: tenantID, WorkspaceID: ws, Environment: access.Test, PlanID: planID}); err != nil {
			return err
		}
		return tx.EntitlementSet(ctx, ws, marketplace.EntitlementSell, plan.Source(planID), string(access.Test), sell)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rulesBody is a complete rules object.
func rulesBody() map[string]any {
	return map[string]any{"commercialUse": "allowed", "monetization": "allowed", "redistribution": "in_derivative_works",
		"modification": "allowed", "attribution": "required", "attributionText": "Music by Ada", "sourceResale": "prohibited"}
}

// publishRights posts a rights policy as p in test mode.
func publishRights(s *platformtest.System, p person, idem string, body any) *platformtest.Response {
	return asTest(s, p, "POST", "/api/v1/rights/policies", idem, body)
}

// offerLicense posts a license offer as p in test mode.
func offerLicense(s *platformtest.System, p person, idem string, body map[string]any) *platformtest.Response {
	return asTest(s, p, "POST", "/api/v1/licenses", idem, body)
}

func offerBody(assetID string, v api.RightsPolicyView) map[string]any {
	return map[string]any{"assetId": assetID, "policyId": v.PolicyID, "policyVersion": v.Version, "termsHash": v.ContentHash,
		"name": "Sync license", "kind": "non_exclusive"}
}

// wantRights fails unless r answered status with a rights policy, and
// returns it.
func wantRights(t *testing.T, what string, r *platformtest.Response, status int) api.RightsPolicyView {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, status)
	}
	var v api.RightsPolicyView
	r.Data(t, &v)
	return v
}

// TestRightsPolicyVersions: a rights policy is a versioned policy of the
// workspace: the same rules (however their keys are ordered) answer the
// same version with 200; changed rules make the next version with 201;
// the earlier version stays usable by a license offer; the content hash is
// the SHA-256 of the rules' canonical JSON; a license offer honours its
// Idempotency-Key and writes its event and audit record.
func TestRightsPolicyVersions(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ada := newSeller(t, s, "ada@studio.example", "studio", true)
		v1 := wantRights(t, "first version", publishRights(s, ada.person, "", map[string]any{"name": "standard", "rules": rulesBody()}),
			http.StatusCreated)
		if v1.Version != 1 || v1.PolicyID != "rights."+ada.workspaceID+".standard" || v1.Name != "standard" || v1.Environment != "test" ||
			v1.WorkspaceID != ada.workspaceID || v1.CreatedByUserID != ada.userID || v1.Rules.AttributionText != "Music by Ada" {
			t.Fatalf("version 1 = %+v", v1)
		}
		canonical := `{"attribution":"required","attributionText":"Music by Ada","commercialUse":"allowed","modification":"allowed",` +
			`"monetization":"allowed","redistribution":"in_derivative_works","sourceResale":"prohibited"}`
		sum := sha256.Sum256([]byte(canonical))
		if v1.ContentHash != hex.EncodeToString(sum[:]) {
			t.Fatalf("content hash %s, want the SHA-256 of %s", v1.ContentHash, canonical)
		}
		// The same rules, keys in another order and spaced out: no new version.
		shuffled := `{"rules": {"sourceResale": "prohibited", "redistribution": "in_derivative_works", "monetization": "allowed",
			"modification": "allowed", "commercialUse": "allowed", "attributionText": "Music by Ada", "attribution": "required"},
			"name": "standard"}`
		same := wantRights(t, "same rules", publishRights(s, ada.person, "", shuffled), http.StatusOK)
		if same.Version != 1 || same.ContentHash != v1.ContentHash {
			t.Fatalf("same rules answered %+v", same)
		}
		changed := rulesBody()
		changed["modification"] = "prohibited"
		v2 := wantRights(t, "changed rules", publishRights(s, ada.person, "", map[string]any{"name": "standard", "rules": changed}),
			http.StatusCreated)
		if v2.Version != 2 || v2.ContentHash == v1.ContentHash || v2.PolicyID != v1.PolicyID || v2.Rules.Modification != "prohibited" {
			t.Fatalf("version 2 = %+v", v2)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = ?`, v1.PolicyID); n != 2 {
			t.Fatalf("%d versions stored, want 2", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE action = 'rights_policy.published' AND target_id = ?`, v1.PolicyID); n != 2 {
			t.Fatalf("%d audit records of publications, want 2", n)
		}

		// A license offer quotes version 1 although version 2 is current.
		asset := uploadAs(t, s, ada.person, pcmWAV(48000, 4800, func(i int) float64 { return 0.2 * math.Sin(float64(i)/10) }))
		body := offerBody(asset, v1)
		r := offerLicense(s, ada.person, "offer-1", body)
		if r.Status != http.StatusCreated {
			t.Fatalf("offer under version 1: %d %s", r.Status, r.Body)
		}
		var o api.LicenseOfferView
		r.Data(t, &o)
		if o.State != "active" || o.PolicyVersion != 1 || o.TermsHash != v1.ContentHash || o.AssetID != asset || o.Version != 1 ||
			o.CreatedByUserID != ada.userID || o.Environment != "test" {
			t.Fatalf("offer = %+v", o)
		}
		r = offerLicense(s, ada.person, "offer-1", body)
		var again api.LicenseOfferView
		r.Data(t, &again)
		if r.Status != http.StatusCreated || again.ID != o.ID || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", r.Status, r.Body)
		}
		body["kind"] = "exclusive"
		if r := offerLicense(s, ada.person, "offer-1", body); r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("the key with another body: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM license_offers WHERE asset_id = ?`, asset); n != 1 {
			t.Fatalf("%d offers stored, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'license.offered' AND aggregate_id = ? AND environment = 'test'`, o.ID); n != 1 {
			t.Fatalf("%d license.offered events, want 1", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE action = 'license.offered' AND target_id = ?`, o.ID); n != 1 {
			t.Fatalf("%d audit records of the offer, want 1", n)
		}
		// Under version 2, a second offer: a change of terms is a new offer.
		if r := offerLicense(s, ada.person, "", offerBody(asset, v2)); r.Status != http.StatusCreated {
			t.Fatalf("offer under version 2: %d %s", r.Status, r.Body)
		}
	})
}

// TestRightsPolicyValidation: unknown fields, values outside their sets
// and contradicting rules are INVALID_INPUT naming the field; nothing is
// published.
func TestRightsPolicyValidation(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ada := newSeller(t, s, "ada@studio.example", "studio", true)
		with := func(k string, v any) map[string]any {
			r := rulesBody()
			if v == nil {
				delete(r, k)
			} else {
				r[k] = v
			}
			return map[string]any{"name": "standard", "rules": r}
		}
		cases := []struct {
			name   string
			body   any
			field  string
			reason string
		}{
			{"unknown rule", with("territory", "worldwide"), "rules.territory", ""},
			{"unknown top-level field", map[string]any{"name": "standard", "rules": rulesBody(), "price": "10"}, "price", ""},
			{"missing rule", with("commercialUse", nil), "rules.commercialUse", ""},
			{"unknown value", with("redistribution", "sometimes"), "rules.redistribution", ""},
			{"a boolean for an enum", with("modification", true), "rules.modification", ""},
			{"monetization without commercial use", with("commercialUse", "prohibited"), "rules.monetization", "requires_commercial_use"},
			{"resale without redistribution", with("sourceResale", "allowed"), "rules.sourceResale", "requires_redistribution"},
			{"credit without attribution", with("attribution", "not_required"), "rules.attributionText", "attribution_not_required"},
			{"bad name", map[string]any{"name": "Standard!", "rules": rulesBody()}, "name", ""},
		}
		for _, c := range cases {
			r := publishRights(s, ada.person, "", c.body)
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || detail(r, "field") != c.field {
				t.Errorf("%s: %d %s, want 400 INVALID_INPUT on %s", c.name, r.Status, r.Body, c.field)
				continue
			}
			if c.reason != "" && detail(r, "reason") != c.reason {
				t.Errorf("%s: reason %v, want %s", c.name, detail(r, "reason"), c.reason)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id LIKE 'rights.%'`); n != 0 {
			t.Fatalf("refused requests published %d versions", n)
		}
	})
}

// TestLicenseOfferRefusals: another workspace's asset is NOT_FOUND, an
// unknown policy or version is NOT_FOUND naming it, a terms hash of
// other content is TERMS_MISMATCH; a CREATOR offers only its own assets;
// nothing refused is stored.
func TestLicenseOfferRefusals(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ada := newSeller(t, s, "ada@studio.example", "studio", true)
		bob := newSeller(t, s, "bob@label.example", "studio", true)
		v1 := wantRights(t, "ada's policy", publishRights(s, ada.person, "", map[string]any{"name": "standard", "rules": rulesBody()}),
			http.StatusCreated)
		bobs := wantRights(t, "bob's policy", publishRights(s, bob.person, "", map[string]any{"name": "standard", "rules": rulesBody()}),
			http.StatusCreated)
		if bobs.PolicyID == v1.PolicyID || bobs.Version != 1 || bobs.ContentHash != v1.ContentHash {
			t.Fatalf("bob's policy = %+v, ada's %+v", bobs, v1)
		}
		wav := pcmWAV(48000, 4800, func(i int) float64 { return 0.1 * math.Sin(float64(i)/7) })
		adas, bobsAsset := uploadAs(t, s, ada.person, wav), uploadAs(t, s, bob.person, wav)

		r := offerLicense(s, ada.person, "", offerBody(bobsAsset, v1))
		wantCode(t, "another workspace's asset", r, http.StatusNotFound, "NOT_FOUND")
		if detail(r, "field") != "assetId" {
			t.Fatalf("details: %s", r.Body)
		}
		r = offerLicense(s, ada.person, "", offerBody(adas, bobs))
		wantCode(t, "another workspace's policy", r, http.StatusNotFound, "NOT_FOUND")
		if detail(r, "field") != "policyId" {
			t.Fatalf("details: %s", r.Body)
		}
		unknown := offerBody(adas, v1)
		unknown["policyVersion"] = 2
		r = offerLicense(s, ada.person, "", unknown)
		wantCode(t, "an unknown version", r, http.StatusNotFound, "NOT_FOUND")
		if detail(r, "field") != "policyVersion" {
			t.Fatalf("details: %s", r.Body)
		}
		mismatch := offerBody(adas, v1)
		mismatch["termsHash"] = hex.EncodeToString(make([]byte, 32))
		r = offerLicense(s, ada.person, "", mismatch)
		wantCode(t, "a terms hash of other content", r, http.StatusConflict, "TERMS_MISMATCH")
		if detail(r, "field") != "termsHash" || detail(r, "policyHash") != v1.ContentHash {
			t.Fatalf("details: %s", r.Body)
		}
		// A live session cannot see the test asset.
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/licenses", Cookie: ada.cookie, Body: offerBody(adas, v1)})
		if r.Code() == "" || r.Status == http.StatusCreated {
			t.Fatalf("a live offer of a test asset: %d %s", r.Status, r.Body)
		}
		// A CREATOR of ada's workspace offers its own asset, not ada's.
		cara := join(t, s, "cara@studio.example", "Cara", invite(t, s, ada.person, "cara@studio.example", "CREATOR"))
		caras := uploadAs(t, s, cara, wav)
		wantCode(t, "a creator on the owner's asset", offerLicense(s, cara, "", offerBody(adas, v1)), http.StatusForbidden, "ACCESS_DENIED")
		if r := offerLicense(s, cara, "", offerBody(caras, v1)); r.Status != http.StatusCreated {
			t.Fatalf("a creator on its own asset: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM license_offers`); n != 1 {
			t.Fatalf("%d offers stored, want the creator's one", n)
		}
	})
}

// TestMarketplaceAccessCodes: a permission failure and an entitlement gap
// have distinct codes and are never swapped: a VIEWER is ACCESS_DENIED on
// any plan; a permitted member of a paid plan without marketplace.sell is
// ENTITLEMENT_REQUIRED (SUBSCRIPTION_REQUIRED on the free plan); an API
// key is refused; the feature flag turns both mutations off.
func TestMarketplaceAccessCodes(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ada := newSeller(t, s, "ada@studio.example", "pro", false)
		vic := join(t, s, "vic@studio.example", "Vic", invite(t, s, ada.person, "vic@studio.example", "VIEWER"))
		body := map[string]any{"name": "standard", "rules": rulesBody()}
		r := publishRights(s, ada.person, "", body)
		wantCode(t, "owner on pro", r, http.StatusForbidden, "ENTITLEMENT_REQUIRED")
		if detail(r, "entitlement") != marketplace.EntitlementSell {
			t.Fatalf("details: %s", r.Body)
		}
		wantCode(t, "owner's offer on pro", offerLicense(s, ada.person, "", map[string]any{"assetId": "ast_x"}), http.StatusForbidden,
			"ENTITLEMENT_REQUIRED")
		wantCode(t, "viewer on pro", publishRights(s, vic, "", body), http.StatusForbidden, "ACCESS_DENIED")
		onPlan(t, s, ada.tenantID, ada.workspaceID, plan.FreeID, false)
		wantCode(t, "owner on free", publishRights(s, ada.person, "", body), http.StatusForbidden, "SUBSCRIPTION_REQUIRED")
		wantCode(t, "viewer on free", publishRights(s, vic, "", body), http.StatusForbidden, "ACCESS_DENIED")
		onPlan(t, s, ada.tenantID, ada.workspaceID, "studio", true)
		wantCode(t, "viewer on studio", publishRights(s, vic, "", body), http.StatusForbidden, "ACCESS_DENIED")
		wantCode(t, "viewer's offer on studio", offerLicense(s, vic, "", map[string]any{"assetId": "ast_x"}), http.StatusForbidden,
			"ACCESS_DENIED")
		v := wantRights(t, "owner on studio", publishRights(s, ada.person, "", body), http.StatusCreated)

		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/rights/policies", Key: s.Boot.TestKey, Body: body})
		wantCode(t, "an API key", r, http.StatusForbidden, "ACCESS_DENIED")

		if err := s.P.SetFeatureFlag(context.Background(), ada.tenantID, ada.workspaceID, marketplace.FeatureMarketplace, false); err != nil {
			t.Fatal(err)
		}
		changed := rulesBody()
		changed["monetization"] = "prohibited"
		wantCode(t, "marketplace off", publishRights(s, ada.person, "", map[string]any{"name": "standard", "rules": changed}),
			http.StatusForbidden, "FEATURE_DISABLED")
		wantCode(t, "viewer with the marketplace off", publishRights(s, vic, "", body), http.StatusForbidden, "ACCESS_DENIED")
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = ?`, v.PolicyID); n != 1 {
			t.Fatalf("%d versions, want the studio one", n)
		}
	})
}

// provenance reads an asset's provenance with a request, failing unless it
// is 200.
func provenance(t *testing.T, s *platformtest.System, req platformtest.Request) api.AssetProvenanceView {
	t.Helper()
	req.Method = "GET"
	r := s.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("provenance %s: %d %s", req.Path, r.Status, r.Body)
	}
	var v api.AssetProvenanceView
	r.Data(t, &v)
	return v
}

// TestProvenanceOfUploadsAndSoundOutputs: an upload records its creator
// and hash; a sound engine output records its operation, its input as
// parent with the input's hash, and its own hash; another workspace and
// the other environment read nothing.
func TestProvenanceOfUploadsAndSoundOutputs(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, soundOptions(), func(t *testing.T, s *platformtest.System) {
		ada := newSeller(t, s, "ada@studio.example", "free", false)
		in := uploadAs(t, s, ada.person, pcmWAV(44100, 2*44100, func(i int) float64 { return 0.03 * math.Sin(float64(i)/9) }))
		test := map[string]string{"Platform-Environment": "test"}
		up := provenance(t, s, platformtest.Request{Path: "/api/v1/assets/" + in + "/provenance", Cookie: ada.cookie, Header: test})
		var inAsset api.AssetView
		asTest(s, ada.person, "GET", "/api/v1/assets/"+in, "", nil).Data(t, &inAsset)
		if up.AssetID != in || up.Origin != "uploaded" || up.CreatorUserID == nil || *up.CreatorUserID != ada.userID ||
			up.OutputSHA256 != inAsset.SHA256 || len(up.Parents) != 0 || up.Provider != nil || up.Model != nil ||
			up.OperationID != nil || up.Basis != "creation" || up.RecordedAt == nil || !up.RecordedAt.Equal(inAsset.CreatedAt) {
			t.Fatalf("upload provenance = %+v (asset %+v)", up, inAsset)
		}

		r := asTest(s, ada.person, "POST", "/api/v1/sound/master", "master-1", map[string]any{"input": map[string]any{"assetId": in},
			"output": map[string]any{"format": "wav", "sampleRate": 48000, "bitDepth": 24}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("master: %d %s", r.Status, r.Body)
		}
		var op api.SoundOperationView
		r.Data(t, &op)
		deadline := time.Now().Add(30 * time.Second)
		for op.Status != "completed" && op.Status != "failed" {
			if time.Now().After(deadline) {
				t.Fatalf("mastering: %s after 30s", op.Status)
			}
			time.Sleep(10 * time.Millisecond)
			asTest(s, ada.person, "GET", "/api/v1/sound/operations/"+op.ID, "", nil).Data(t, &op)
		}
		var res api.SoundResult
		if r := asTest(s, ada.person, "GET", "/api/v1/sound/operations/"+op.ID+"/result", "", nil); r.Status == http.StatusOK {
			r.Data(t, &res)
		}
		if op.Status != "completed" || len(res.Outputs) != 1 {
			t.Fatalf("mastering = %+v, result %+v", op, res)
		}
		out := res.Outputs[0].AssetID
		var outAsset api.AssetView
		asTest(s, ada.person, "GET", "/api/v1/assets/"+out, "", nil).Data(t, &outAsset)
		d := provenance(t, s, platformtest.Request{Path: "/api/v1/assets/" + out + "/provenance", Cookie: ada.cookie, Header: test})
		if d.Origin != "derived" || d.OperationID == nil || *d.OperationID != op.ID || len(d.Parents) != 1 ||
			d.Parents[0].AssetID != in || d.Parents[0].SHA256 == nil || *d.Parents[0].SHA256 != inAsset.SHA256 ||
			d.OutputSHA256 != outAsset.SHA256 || d.OutputSHA256 == inAsset.SHA256 || d.CreatorUserID == nil ||
			*d.CreatorUserID != ada.userID || d.Provider != nil || d.Basis != "creation" {
			t.Fatalf("output provenance = %+v", d)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM asset_provenance_parents WHERE parent_asset_id = ?`, in); n != 1 {
			t.Fatalf("%d records name the input as parent, want 1", n)
		}

		// Another workspace, and the other environment, read nothing.
		bob := newSeller(t, s, "bob@label.example", "free", false)
		for _, id := range []string{in, out} {
			r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + id + "/provenance", Cookie: bob.cookie, Header: test})
			wantCode(t, "another workspace reads "+id, r, http.StatusNotFound, "NOT_FOUND")
			r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + id + "/provenance", Cookie: ada.cookie})
			wantCode(t, "the live environment reads "+id, r, http.StatusNotFound, "NOT_FOUND")
		}
		// A VIEWER of the workspace reads it, as it reads the asset.
		vic := join(t, s, "vic@studio.example", "Vic", invite(t, s, ada.person, "vic@studio.example", "VIEWER"))
		if v := provenance(t, s, platformtest.Request{Path: "/api/v1/assets/" + out + "/provenance", Cookie: vic.cookie, Header: test}); v.AssetID != out {
			t.Fatalf("viewer read %+v", v)
		}
	})
}

// TestProvenanceOfGeneratedTracks: a generation through the provider
// simulators records, for each ingested track, the provider that
// delivered it, the model asked for, the operation and its creator.
func TestProvenanceOfGeneratedTracks(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		acc := acceptedID(t, generate(s, "gen-prov", map[string]any{"prompt": "A calm piano piece", "model": "v5"}))
		waitTasksA(t, s, 1)
		if err := s.ProviderA.Complete(s.ProviderA.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		v := waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + acc.OperationID + "/result", Key: s.Boot.TestKey})
		var res api.GenerationResult
		r.Data(t, &res)
		if len(res.Tracks) != 2 || len(v.Attempts) != 1 {
			t.Fatalf("result = %+v, attempts %+v", res, v.Attempts)
		}
		for _, tr := range res.Tracks {
			p := provenance(t, s, platformtest.Request{Path: "/api/v1/assets/" + tr.AssetID + "/provenance", Key: s.Boot.TestKey})
			if p.Origin != "generated" || p.Provider == nil || *p.Provider != v.Attempts[0].Provider || *p.Provider != "MUSIC_PROVIDER_A" ||
				p.Model == nil || *p.Model != v.Model || v.Model != "v5" || p.OperationID == nil || *p.OperationID != acc.OperationID ||
				p.CreatorUserID == nil || *p.CreatorUserID != s.Boot.OwnerID || len(p.Parents) != 0 || p.OutputSHA256 != tr.SHA256 ||
				p.Basis != "creation" {
				t.Fatalf("provenance of %s = %+v", tr.AssetID, p)
			}
		}
	})
}
