package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// TestNetworkTopology reads the creative-network record: the loop from
// create back to create, the community branches, the token node read
// from each environment's registry (gated in live, which has no cluster;
// deployed with the verified mint in test once the start-up run passed),
// meta.timestamp from the platform's clock, and no measured audience
// anywhere in the body.
func TestNetworkTopology(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			s.Clock.Advance(90 * time.Second)
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/network/platform"})
			if r.Status != http.StatusOK {
				t.Fatalf("anonymous: %d %s", r.Status, r.Body)
			}
			var top api.NetworkTopologyView
			r.Data(t, &top)
			var env struct {
				Meta struct {
					Timestamp time.Time `json:"timestamp"`
				} `json:"meta"`
			}
			if err := json.Unmarshal(r.Body, &env); err != nil {
				t.Fatal(err)
			}
			if !env.Meta.Timestamp.Equal(s.Clock.Now()) {
				t.Errorf("meta.timestamp %v, want the clock's %v", env.Meta.Timestamp, s.Clock.Now())
			}
			if top.ID != "platform" || top.Version != "1.0.0" || top.TokenGate || top.LoopClosesAt != "create" {
				t.Errorf("record %+v", top)
			}
			var labels []string
			for _, n := range top.PrimaryLoop {
				labels = append(labels, n.Label)
			}
			want := "Create,Music,Studio app,Project,Community,Production,External distribution and audience,Creator Network,Rewards,Chain,Token"
			if strings.Join(labels, ",") != want {
				t.Errorf("loop %v", labels)
			}
			tok := top.PrimaryLoop[len(top.PrimaryLoop)-1]
			if tok.ID != "token" || tok.Next != "create" || tok.NetworkTokenStateView == nil || tok.State != "deployment-gated" ||
				tok.DeploymentStatus != "planned" || tok.Mint != nil && *tok.Mint != nil || tok.Verified == nil || *tok.Verified {
				t.Errorf("live token node %+v", tok)
			}
			if d := top.Deployment.Solana; d.Status != "planned" || d.Mint != nil || d.Verified {
				t.Errorf("live deployment %+v", d)
			}
			// The token node alone carries state; its mint is null, not
			// absent (a null decodes to a nil outer pointer).
			var raw struct {
				Data struct {
					PrimaryLoop []map[string]any `json:"primaryLoop"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &raw); err != nil {
				t.Fatal(err)
			}
			for i, n := range raw.Data.PrimaryLoop {
				_, has := n["mint"]
				if has != (i == len(raw.Data.PrimaryLoop)-1) {
					t.Errorf("node %v: mint present %v", n["id"], has)
				}
			}
			var branches []string
			for _, b := range top.CommunityBranches {
				branches = append(branches, b.Label)
			}
			if strings.Join(branches, ",") != "Video,Art,Story" {
				t.Errorf("branches %v", branches)
			}
			noAudience(t, r.Body)

			// The test registry verifies the simulator's mint: the test
			// credential's record shows it deployed, with that mint.
			var dep api.TokenDeploymentView
			waitFor(t, "the start-up verification", func() bool {
				dep, _ = tokenGet[api.TokenDeploymentView](t, s, "/api/v1/token/deployment", s.Boot.TestKey)
				return dep.Verified
			})
			top, r = tokenGet[api.NetworkTopologyView](t, s, "/api/v1/network/platform", s.Boot.TestKey)
			tok = top.PrimaryLoop[len(top.PrimaryLoop)-1]
			if tok.State != "deployed" || tok.DeploymentStatus != "verified" || tok.Mint == nil || *tok.Mint == nil ||
				**tok.Mint != *dep.Mint || !*tok.Verified {
				t.Errorf("test token node %+v", tok)
			}
			if d := top.Deployment.Solana; d.Status != "verified" || d.Mint == nil || *d.Mint != *dep.Mint || !d.Verified {
				t.Errorf("test deployment %+v", d)
			}
			noAudience(t, r.Body)
		})
}

// noAudience fails when any key of the JSON body names a measured
// audience or money the platform does not observe.
func noAudience(t *testing.T, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"view", "reach", "engagement", "revenue", "listener", "follower", "impression", "stream", "play"}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				for _, f := range forbidden {
					if strings.Contains(strings.ToLower(k), f) {
						t.Errorf("key %s.%s names %s", path, k, f)
					}
				}
				walk(e, path+"."+k)
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]")
			}
		}
	}
	walk(v, "")
}
