package network

import (
	"time"

	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/token"
)

// ID is the record's id.
const ID = "platform"

// Version is the record's own version; it changes when a node, branch or
// principle of the record changes.
const Version = "1.0.0"

// ChainName is the chain the token deploys to: the key of its node in
// Topology.Deployment.
const ChainName = "solana"

// Kind says what a node of the loop is.
type Kind string

// The kinds of node.
const (
	// KindPlatform is a part of the platform itself.
	KindPlatform Kind = "platform"
	// KindExternal is a place outside the platform work goes to (external
	// distribution and its audience); the platform measures nothing there.
	KindExternal Kind = "external"
	// KindChain is the public chain value moves on.
	KindChain Kind = "chain"
	// KindToken is the platform token.
	KindToken Kind = "token"
)

// Kinds lists every Kind.
func Kinds() []Kind { return []Kind{KindPlatform, KindExternal, KindChain, KindToken} }

// The token node's states and deployment statuses.
const (
	// StateGated is the token node's state until its deployment verified.
	StateGated = "deployment-gated"
	// StateDeployed is its state once a verification run passed.
	StateDeployed = "deployed"
	// DeploymentPlanned is the deployment status until verified.
	DeploymentPlanned = "planned"
	// DeploymentVerified is the deployment status once verified.
	DeploymentVerified = "verified"
)

// Node is one node of the primary loop.
type Node struct {
	// ID is the node's stable id.
	ID string
	// Label is what clients show.
	Label string
	// Kind says what the node is.
	Kind Kind
	// Next is the id of the node the loop goes to from this one.
	Next string
	// Token is set on the token node only.
	Token *TokenState
}

// TokenState is the token node's state, read from the token registry.
type TokenState struct {
	// State is StateGated or StateDeployed.
	State string
	// DeploymentStatus is DeploymentPlanned or DeploymentVerified.
	DeploymentStatus string
	// Mint is the verified mint; "" until verified.
	Mint string
	// Verified is true once a verification run of the current
	// configuration passed.
	Verified bool
}

// Branch is a branch of community production.
type Branch struct {
	// ID is the branch's stable id.
	ID string
	// Label is what clients show.
	Label string
	// From is the node the branch leaves from (community).
	From string
	// SubmissionTypes are the submission types whose work the branch is.
	SubmissionTypes []project.SubmissionType
}

// Principle is one rule the loop keeps.
type Principle struct {
	// ID is the principle's stable id.
	ID string
	// Text states it.
	Text string
}

// Topology is the network topology record.
type Topology struct {
	// ID is the record's id (ID).
	ID string
	// Version is the record's version (Version).
	Version string
	// Title names the record.
	Title string
	// TokenGate is false: no step of the loop needs the token.
	TokenGate bool
	// LoopClosesAt is the node the loop returns to after the token.
	LoopClosesAt string
	// PrimaryLoop are the loop's nodes, in order; the last is the token.
	PrimaryLoop []Node
	// CommunityBranches are community production's branches.
	CommunityBranches []Branch
	// Principles are the rules the loop keeps.
	Principles []Principle
	// Deployment is the token's deployment, by chain (ChainName).
	Deployment map[string]TokenState
	// At is when the record was read, by the platform's clock.
	At time.Time
}

// TokenStateOf is the token node's state as the registry's view v shows
// it (package doc, The token node).
func TokenStateOf(v token.View) TokenState {
	if !v.Verified() {
		return TokenState{State: StateGated, DeploymentStatus: DeploymentPlanned}
	}
	return TokenState{State: StateDeployed, DeploymentStatus: DeploymentVerified, Mint: v.Config.Mint, Verified: true}
}

// Platform returns the record with the token node's state from the token
// registry's view v, read at now.
func Platform(v token.View, now time.Time) Topology {
	ts := TokenStateOf(v)
	loop := []Node{
		{ID: "create", Label: "Create", Kind: KindPlatform},
		{ID: "music", Label: "Music", Kind: KindPlatform},
		{ID: "studio", Label: "Studio app", Kind: KindPlatform},
		{ID: "project", Label: "Project", Kind: KindPlatform},
		{ID: "community", Label: "Community", Kind: KindPlatform},
		{ID: "production", Label: "Production", Kind: KindPlatform},
		{ID: "distribution", Label: "External distribution and audience", Kind: KindExternal},
		{ID: "creator-network", Label: "Creator Network", Kind: KindPlatform},
		{ID: "rewards", Label: "Rewards", Kind: KindPlatform},
		{ID: "chain", Label: "Chain", Kind: KindChain},
		{ID: "token", Label: "Token", Kind: KindToken, Token: &ts},
	}
	for i := range loop {
		loop[i].Next = loop[(i+1)%len(loop)].ID
	}
	return Topology{ID: ID, Version: Version, Title: "Creator network", TokenGate: false, LoopClosesAt: loop[0].ID,
		PrimaryLoop: loop,
		CommunityBranches: []Branch{
			{ID: "video", Label: "Video", From: "community", SubmissionTypes: []project.SubmissionType{"music_video", "short_video",
				"trailer", "animation"}},
			{ID: "art", Label: "Art", From: "community", SubmissionTypes: []project.SubmissionType{"artwork", "cover_art"}},
			{ID: "story", Label: "Story", From: "community", SubmissionTypes: []project.SubmissionType{"story"}},
		},
		Principles: []Principle{
			{ID: "no-token-gate", Text: "No step of the loop needs the token: creating, collaborating and being rewarded never require holding it."},
			{ID: "configured-is-not-verified", Text: "The token node is deployment-gated until a verification run of the registry's configuration passes; a configured mint is not a deployment."},
			{ID: "nothing-fabricated", Text: "External nodes are destinations, not measured audiences: the record carries no views, reach, engagement or revenue."},
			{ID: "public-by-choice", Text: "Work enters the community and the creator network only through public projects and accepted submissions."},
		},
		Deployment: map[string]TokenState{ChainName: ts},
		At:         now.UTC(),
	}
}
