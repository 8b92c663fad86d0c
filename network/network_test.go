package network_test

import (
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/network"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/token"
)

func TestPlatformLoop(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	top := network.Platform(token.View{Config: token.Config{Mint: "Mint111"}, State: token.PreDeployment}, now)
	var ids []string
	for _, n := range top.PrimaryLoop {
		ids = append(ids, n.ID)
	}
	want := []string{"create", "music", "studio", "project", "community", "production", "distribution", "creator-network", "rewards", "chain", "token"}
	if !slices.Equal(ids, want) {
		t.Fatalf("loop %v, want %v", ids, want)
	}
	last := top.PrimaryLoop[len(top.PrimaryLoop)-1]
	if last.Next != top.LoopClosesAt || top.LoopClosesAt != "create" || top.TokenGate {
		t.Errorf("loop closes at %q (token next %q), tokenGate %v", top.LoopClosesAt, last.Next, top.TokenGate)
	}
	// A configured mint that no run verified is still gated, with no mint.
	if last.Token == nil || *last.Token != (network.TokenState{State: network.StateGated, DeploymentStatus: network.DeploymentPlanned}) {
		t.Errorf("token node %+v", last.Token)
	}
	if top.Deployment[network.ChainName] != *last.Token || !top.At.Equal(now) {
		t.Errorf("deployment %+v at %v", top.Deployment, top.At)
	}
	for _, n := range top.PrimaryLoop[:len(top.PrimaryLoop)-1] {
		if n.Token != nil {
			t.Errorf("node %s carries token state", n.ID)
		}
	}
	var branches []string
	for _, b := range top.CommunityBranches {
		branches = append(branches, b.Label)
		for _, st := range b.SubmissionTypes {
			if !slices.Contains(project.SubmissionTypes(), st) {
				t.Errorf("branch %s names unknown submission type %q", b.ID, st)
			}
		}
	}
	if !slices.Equal(branches, []string{"Video", "Art", "Story"}) {
		t.Errorf("branches %v", branches)
	}
}

func TestTokenStateOfVerified(t *testing.T) {
	run := &token.Run{Outcome: token.Passed}
	v := token.View{Config: token.Config{Mint: "Mint111"}, State: token.Verified("mainnet"), Decisive: run}
	got := network.TokenStateOf(v)
	want := network.TokenState{State: network.StateDeployed, DeploymentStatus: network.DeploymentVerified, Mint: "Mint111", Verified: true}
	if got != want {
		t.Errorf("verified: %+v, want %+v", got, want)
	}
}
