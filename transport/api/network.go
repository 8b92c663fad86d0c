package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/network"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/transport"
)

// NetworkTopologyView is GET /api/v1/network/platform: the creative
// network's topology record.
type NetworkTopologyView struct {
	// ID is the record's id.
	ID string `json:"id" example:"platform"`
	// Version is the record's own version; it changes when a node, branch or principle changes.
	Version string `json:"version" example:"1.0.0"`
	// Title names the record.
	Title string `json:"title" example:"Creator network"`
	// TokenGate is false: no step of the loop needs the token.
	TokenGate bool `json:"tokenGate" example:"false"`
	// LoopClosesAt is the id of the node the loop returns to after the token (create).
	LoopClosesAt string `json:"loopClosesAt" example:"create"`
	// PrimaryLoop are the loop's nodes in order, from create to the token; each names the next, and the token's next is loopClosesAt.
	PrimaryLoop []NetworkNodeView `json:"primaryLoop"`
	// CommunityBranches are community production's branches: Video, Art and Story.
	CommunityBranches []NetworkBranchView `json:"communityBranches"`
	// Principles are the rules the loop keeps.
	Principles []NetworkPrincipleView `json:"principles"`
	// Deployment is the token's deployment on its chain, read from the token registry of the caller's environment.
	Deployment NetworkDeploymentView `json:"deployment"`
}

// NetworkNodeView is one node of the primary loop. Only the token node
// carries state, deploymentStatus, mint and verified; no node carries
// views, reach, engagement or revenue.
type NetworkNodeView struct {
	// ID is the node's stable id.
	ID string `json:"id" example:"create"`
	// Label is what clients show.
	Label string `json:"label" example:"Create"`
	// Kind says what the node is: a part of the platform, an external destination (measured by nothing here), the chain or the token.
	Kind string `json:"kind" example:"platform" enum:"platform,external,chain,token"`
	// Next is the id of the node the loop goes to from this one.
	Next string `json:"next" example:"music"`
	// The token node's state; absent on every other node.
	*NetworkTokenStateView
}

// NetworkTokenStateView is the token's state as the token registry shows
// it: deployment-gated, planned, no mint and not verified until a
// verification run of the registry's configuration passed.
type NetworkTokenStateView struct {
	// State is deployment-gated until the deployment verified, then deployed.
	State string `json:"state,omitzero" example:"deployment-gated" enum:"deployment-gated,deployed"`
	// DeploymentStatus is planned until the deployment verified, then verified.
	DeploymentStatus string `json:"deploymentStatus,omitzero" example:"planned" enum:"planned,verified"`
	// Mint is the verified mint (base58); null until verified, whatever mint is configured.
	Mint **string `json:"mint,omitzero" example:"Mint111111111111111111111111111111111111111"`
	// Verified is true once a verification run of the registry's configuration passed.
	Verified *bool `json:"verified,omitzero" example:"false"`
}

// NetworkDeploymentView is the token's deployment, by chain.
type NetworkDeploymentView struct {
	// Solana is the token's deployment on Solana, the chain the token registry verifies.
	Solana NetworkChainDeploymentView `json:"solana"`
}

// NetworkChainDeploymentView is the token's deployment on one chain.
type NetworkChainDeploymentView struct {
	// Status is planned until the deployment verified, then verified.
	Status string `json:"status" example:"planned" enum:"planned,verified"`
	// Mint is the verified mint (base58); null until verified.
	Mint *string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Verified is true once a verification run of the registry's configuration passed.
	Verified bool `json:"verified" example:"false"`
}

// NetworkBranchView is a branch of community production.
type NetworkBranchView struct {
	// ID is the branch's stable id.
	ID string `json:"id" example:"video"`
	// Label is what clients show.
	Label string `json:"label" example:"Video"`
	// From is the id of the node the branch leaves from.
	From string `json:"from" example:"community"`
	// SubmissionTypes are the submission types (of music_video, artwork, animation, remix, short_video, trailer, story, cover_art, audio, other) whose work the branch is.
	SubmissionTypes []string `json:"submissionTypes" example:"music_video"`
}

// NetworkPrincipleView is one rule the loop keeps.
type NetworkPrincipleView struct {
	// ID is the principle's stable id.
	ID string `json:"id" example:"no-token-gate"`
	// Text states it.
	Text string `json:"text" example:"No step of the loop needs the token."`
}

func networkView(t network.Topology) NetworkTopologyView {
	v := NetworkTopologyView{ID: t.ID, Version: t.Version, Title: t.Title, TokenGate: t.TokenGate, LoopClosesAt: t.LoopClosesAt,
		PrimaryLoop: []NetworkNodeView{}, CommunityBranches: []NetworkBranchView{}, Principles: []NetworkPrincipleView{}}
	for _, n := range t.PrimaryLoop {
		nv := NetworkNodeView{ID: n.ID, Label: n.Label, Kind: string(n.Kind), Next: n.Next}
		if n.Token != nil {
			mint, verified := optional(n.Token.Mint), n.Token.Verified
			nv.NetworkTokenStateView = &NetworkTokenStateView{State: n.Token.State, DeploymentStatus: n.Token.DeploymentStatus,
				Mint: &mint, Verified: &verified}
		}
		v.PrimaryLoop = append(v.PrimaryLoop, nv)
	}
	for _, b := range t.CommunityBranches {
		bv := NetworkBranchView{ID: b.ID, Label: b.Label, From: b.From, SubmissionTypes: []string{}}
		for _, st := range b.SubmissionTypes {
			bv.SubmissionTypes = append(bv.SubmissionTypes, string(st))
		}
		v.CommunityBranches = append(v.CommunityBranches, bv)
	}
	for _, p := range t.Principles {
		v.Principles = append(v.Principles, NetworkPrincipleView{ID: p.ID, Text: p.Text})
	}
	d := t.Deployment[network.ChainName]
	v.Deployment.Solana = NetworkChainDeploymentView{Status: d.DeploymentStatus, Mint: optional(d.Mint), Verified: d.Verified}
	return v
}

// networkRoutes serve the network topology record (spec, Network
// topology record). It reads the token registry for the token node, so
// it is served with the registry.
func networkRoutes(tok *token.Service) []Route {
	if tok == nil {
		return nil
	}
	ex := networkView(network.Platform(token.View{State: token.PreDeployment}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	return []Route{{Method: http.MethodGet, Pattern: "/api/v1/network/platform", OperationID: "getNetworkTopology",
		Tag: transport.TagArchitecture, Summary: "Get the creative-network topology",
		Description: "The creative network's topology record, with its own version: the primary loop (create, music, the studio " +
			"app, project, community, production, external distribution and audience, the creator network, rewards, the chain, " +
			"the token, and back to create: loopClosesAt), community production's Video, Art and Story branches with the " +
			"submission types each takes, the principles, and the token's deployment. The token node's state is read from the " +
			"token registry of the caller's environment: deployment-gated, deploymentStatus planned, mint null and verified " +
			"false until a verification run of the registry's configuration passed (a configured mint is not a deployment); " +
			"then deployed, verified, with the verified mint. External nodes are destinations: no node carries views, reach, " +
			"engagement or revenue, which the platform does not observe. meta.timestamp is when the record was read." + tokenEnvNote,
		Auth: transport.AuthPublic, OptionalAuth: true, Response: ex,
		Handle: func(ctx context.Context, c *Call) (any, error) {
			v, err := tok.View(ctx, callerEnvironment(c), c.Tx)
			if err != nil {
				return nil, err
			}
			now := c.Tx.Now()
			c.SetTimestamp(now)
			return networkView(network.Platform(v, now)), nil
		}}}
}
