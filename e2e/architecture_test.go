package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	chainintent "github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/generation"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/webhook"
)

// domainTables are the domains' own tables, read here from each domain's
// function, independently of the root's list: the architecture route must
// serve each, row for row.
func domainTables() map[string][]architecture.Transition {
	out := map[string][]architecture.Transition{
		"generation.operation":      architecture.Rows(generation.Moves()),
		"generation.attempt":        architecture.Rows(genop.AttemptMoves()),
		"sound.operation":           architecture.Rows(sound.Moves()),
		"ai.operation":              architecture.Rows(ai.OperationMoves()),
		"ai.artifact":               architecture.Rows(tool.Moves()),
		"apikey.key":                architecture.Rows(apikey.Moves()),
		"billing.checkout":          architecture.Rows(billing.Table(billing.MachineCheckout).Rows()),
		"billing.subscription":      architecture.Rows(billing.Table(billing.MachineSubscription).Rows()),
		"project.project":           architecture.Rows(project.Moves()),
		"project.submission":        architecture.Rows(project.SubmissionMoves()),
		"release.release":           architecture.Rows(release.Moves()),
		"rewards.challenge":         architecture.Rows(rewards.Moves()),
		"rewards.funding":           architecture.Rows(rewards.FundingMoves()),
		"rewards.reward":            architecture.Rows(rewards.RewardMoves()),
		"marketplace.license_offer": architecture.Rows(marketplace.Moves()),
		"marketplace.order":         architecture.Rows(marketplace.OrderMoves()),
		"chain/wallet.challenge":    architecture.Rows(wallet.Moves()),
		"chain/intent.intent":       architecture.Rows(chainintent.Transitions()),
		"chain/intent.network":      architecture.Rows(chainintent.NetworkTransitions()),
		"chain/relay.network":       architecture.Rows(relay.Transitions()),
		"swap.operation":            architecture.Rows(swap.Moves()),
		"token/sale.sale":           architecture.Rows(sale.Moves()),
		"web3/cctp.transfer":        architecture.Rows(cctp.Moves()),
		"web3/x402.settlement":      architecture.Rows(x402.Moves()),
		"webhook.endpoint":          architecture.Rows(webhook.Moves()),
		"webhook.delivery":          architecture.Rows(webhook.DeliveryMoves()),
	}
	for _, c := range []chain.Cluster{chain.Mainnet, chain.Devnet, chain.Testnet, chain.Localnet} {
		out["token.deployment."+string(c)] = architecture.Rows(token.Transitions(c))
	}
	return out
}

// readArchitecture reads the model as req's credential; the answer must be 200.
func readArchitecture(t *testing.T, s *platformtest.System, req platformtest.Request) architecture.Model {
	t.Helper()
	req.Method, req.Path = http.MethodGet, "/api/v1/architecture"
	r := s.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("architecture: %d %s", r.Status, r.Body)
	}
	var m architecture.Model
	r.Data(t, &m)
	return m
}

// forbiddenEvents are the events the machine names that have no row from
// state from: the moves its map forbids there.
func forbiddenEvents(m architecture.Machine, from string) []string {
	var out []string
	for _, t := range m.Transitions {
		if !slices.ContainsFunc(m.Transitions, func(r architecture.Transition) bool { return r.From == from && r.Event == t.Event }) &&
			!slices.Contains(out, t.Event) {
			out = append(out, t.Event)
		}
	}
	return out
}

// TestArchitectureMapsAreTheDomainTables: the route serves model v2.1, the
// root's domain list as its contexts, and every state machine's map equal,
// row for row, to the table its domain enforces (read here from the
// domain itself); no machine is served that the domains lack, and none is
// missing. Any member or key of any workspace reads the same model, in
// either environment; without a credential it is 401.
func TestArchitectureMapsAreTheDomainTables(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		m := readArchitecture(t, s, platformtest.Request{Key: s.Boot.TestKey})
		if m.Version != "v2.1" {
			t.Errorf("version = %q, want v2.1", m.Version)
		}
		var pkgs []string
		for _, c := range m.Contexts {
			pkgs = append(pkgs, c.Package)
		}
		var want []string
		for _, c := range platform.Domains() {
			want = append(want, c.Package)
		}
		if d := cmp.Diff(want, pkgs); d != "" {
			t.Errorf("contexts differ from platform.Domains (-want +got):\n%s", d)
		}
		tables := domainTables()
		for _, mc := range m.Machines {
			rows, ok := tables[mc.Name]
			if !ok {
				t.Errorf("machine %s is served but no domain table of that name is known here", mc.Name)
				continue
			}
			if d := cmp.Diff(rows, mc.Transitions); d != "" {
				t.Errorf("machine %s differs from its domain's table (-domain +served):\n%s", mc.Name, d)
			}
			delete(tables, mc.Name)
		}
		for name := range tables {
			t.Errorf("the domain table %s is not served", name)
		}
		if len(m.Facts) == 0 {
			t.Error("no authoritative-state matrix")
		}
		for _, f := range m.Facts {
			if !slices.Contains(want, f.Domain) {
				t.Errorf("fact %s names domain %s, which is no context", f.Fact, f.Domain)
			}
		}

		// Every principal reads the same model: a viewer's session in
		// either environment, a narrow key, another tenant's owner.
		owner, members := team(t, s, "arch", map[string]string{"viewer": "VIEWER"})
		narrow, _ := createKeyAs(t, s, owner, map[string]any{"name": "narrow", "scopes": []string{"read"}})
		other := bootstrapOwner(t, s, "Other")
		for what, req := range map[string]platformtest.Request{
			"a viewer (live)":         {Cookie: members["viewer"].cookie},
			"a viewer (test)":         {Cookie: members["viewer"].cookie, Header: map[string]string{"Platform-Environment": "test"}},
			"a narrow key":            {Key: narrow},
			"another tenant's key":    {Key: other.key("live")},
			"another tenant's member": {Cookie: other.cookie},
		} {
			if d := cmp.Diff(m, readArchitecture(t, s, req)); d != "" {
				t.Errorf("%s reads another model:\n%s", what, d)
			}
		}
		r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/architecture"})
		refused(t, "no credential", r, http.StatusUnauthorized, "UNAUTHENTICATED")
	})
}

// TestArchitectureForbiddenJumpsAreRefused: for a few machines, a move the
// served map has no row for is refused by the machine's own route with 409
// INVALID_STATE_TRANSITION, and the record keeps its state: a project in
// DRAFT, a submission SUBMITTED, a challenge in DRAFT, a revoked API key.
func TestArchitectureForbiddenJumpsAreRefused(t *testing.T) {
	t.Parallel()
	media := sbmStartMedia(t)
	opts := rewardOptions()
	platformtest.Dialects(t, media.options(t, opts), func(t *testing.T, s *platformtest.System) {
		lead := signIn(t, s, "lead@jumps.example", "Lead")
		onboard(t, s, &lead, "Jumps")
		m := readArchitecture(t, s, platformtest.Request{Cookie: lead.cookie})
		machine := func(name string) architecture.Machine {
			mc, ok := m.Machine(name)
			if !ok {
				t.Fatalf("machine %s is not served", name)
			}
			return mc
		}

		// A project in DRAFT: every status its map has no row to.
		p := createProject(t, s, lead.cookie, map[string]any{"title": "Jumps", "type": "single"})
		jumps := forbiddenEvents(machine("project.project"), "DRAFT")
		if len(jumps) == 0 {
			t.Fatal("the project map forbids nothing from DRAFT")
		}
		for _, to := range jumps {
			refused(t, "project DRAFT -> "+to, moveProject(s, lead.cookie, p.ID, project.Status(to)), http.StatusConflict, "INVALID_STATE_TRANSITION")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE id = ? AND status = 'DRAFT' AND version = ?`, p.ID, p.Version); n != 1 {
			t.Error("the project changed on refused moves")
		}

		// A submission SUBMITTED: a decision without a review started.
		pub := sbmOpenProject(t, s, lead, "public")
		creator := signIn(t, s, "creator@jumps.example", "Creator")
		onboard(t, s, &creator, "Creator")
		sub := sbmSubmit(t, s, creator, pub.ID, media.base+"/cover.png")
		sub = sbmProbed(t, s, creator, sub.ID)
		for _, to := range forbiddenEvents(machine("project.submission"), "SUBMITTED") {
			refused(t, "submission SUBMITTED -> "+to, sbmReview(s, platformtest.Request{Cookie: lead.cookie}, sub.ID, project.SubmissionStatus(to), ""),
				http.StatusConflict, "INVALID_STATE_TRANSITION")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM submissions WHERE id = ? AND status = 'SUBMITTED' AND version = ?`, sub.ID, sub.Version); n != 1 {
			t.Error("the submission changed on refused moves")
		}

		// A challenge in DRAFT: every skip ahead.
		r := asTest(s, lead, http.MethodPost, "/api/v1/projects", "", map[string]any{"title": "Challenge home", "type": "remix"})
		var home api.ProjectView
		r.Data(t, &home)
		now := s.Clock.Now()
		r = asTest(s, lead, http.MethodPost, "/api/v1/challenges", "", map[string]any{"projectId": home.ID, "title": "Jump it",
			"rules": "One entry.", "window": map[string]any{"opensAt": now, "closesAt": now.Add(7 * 24 * time.Hour)},
			"poolAtomic": strconv.Itoa(rewardPool), "mint": s.Token.Mint.String()})
		var ch api.ChallengeView
		r.Data(t, &ch)
		if r.Status != http.StatusCreated {
			t.Fatalf("challenge: %d %s", r.Status, r.Body)
		}
		for _, to := range forbiddenEvents(machine("rewards.challenge"), "DRAFT") {
			r := asTest(s, lead, http.MethodPost, "/api/v1/challenges/"+ch.ID+"/status", "", map[string]string{"status": to})
			refused(t, "challenge DRAFT -> "+to, r, http.StatusConflict, "INVALID_STATE_TRANSITION")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM challenges WHERE id = ? AND status = 'DRAFT'`, ch.ID); n != 1 {
			t.Error("the challenge changed on refused moves")
		}

		// A release in DRAFT: every status its map has no row to.
		rel := createRelease(t, s, lead, "jumps-release", releaseBody(s, "asset", releaseAsset(t, s, lead)))
		jumps = forbiddenEvents(machine("release.release"), "DRAFT")
		if len(jumps) == 0 {
			t.Fatal("the release map forbids nothing from DRAFT")
		}
		for _, to := range jumps {
			refused(t, "release DRAFT -> "+to, moveRelease(s, lead, rel.ID, release.Status(to)), http.StatusConflict, "INVALID_STATE_TRANSITION")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM releases WHERE id = ? AND status = 'DRAFT' AND version = 1`, rel.ID); n != 1 {
			t.Error("the release changed on refused moves")
		}

		// A revoked API key: rotate and update have no row from revoked.
		_, ks := createKeyAs(t, s, lead, map[string]any{"name": "to revoke", "scopes": []string{"read"}})
		keyPath := "/api/v1/api-keys/" + ks.Key.ID
		if r := asTest(s, lead, http.MethodPost, keyPath+"/revoke", "", nil); r.Status != http.StatusOK {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		var version int
		if err := s.DB.Read().IDB().NewRaw(`SELECT version FROM api_keys WHERE id = ?`, ks.Key.ID).Scan(context.Background(), &version); err != nil {
			t.Fatal(err)
		}
		routes := map[string]func() *platformtest.Response{
			string(apikey.EventRotate): func() *platformtest.Response { return asTest(s, lead, http.MethodPost, keyPath+"/rotate", "", nil) },
			string(apikey.EventUpdate): func() *platformtest.Response {
				return asTest(s, lead, http.MethodPatch, keyPath, "", map[string]any{"name": "revived"})
			},
		}
		jumps = forbiddenEvents(machine("apikey.key"), string(apikey.Revoked))
		if !slices.Contains(jumps, string(apikey.EventRotate)) || !slices.Contains(jumps, string(apikey.EventUpdate)) {
			t.Fatalf("the key map allows %v from revoked", jumps)
		}
		for _, ev := range jumps {
			if call, ok := routes[ev]; ok {
				refused(t, "revoked key on "+ev, call(), http.StatusConflict, "INVALID_STATE_TRANSITION")
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM api_keys WHERE id = ? AND status = 'revoked' AND version = ?`, ks.Key.ID, version); n != 1 {
			t.Error("the key changed on refused moves")
		}
	})
}
