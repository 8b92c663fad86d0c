package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
)

// CreatorView is a creator's public profile: the person behind a verified
// wallet.
type CreatorView struct {
	// ID is the creator's id: the user id behind the wallet.
	ID string `json:"id" example:"usr_01jd0000000000000000000000"`
	// Object is always "creator".
	Object string `json:"object" example:"creator"`
	// DisplayName is the creator's display name.
	DisplayName string `json:"displayName" example:"Ada Lovelace"`
	// Wallet is the verified wallet the creator was found by.
	Wallet CreatorWalletView `json:"wallet"`
	// CreatedAt is when the creator's account was created (member since).
	CreatedAt time.Time `json:"createdAt"`
	// Environment is the environment (test or live) the counts are of: the caller's.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Counts are counts of the creator's stored rows in the caller's environment.
	Counts CreatorCountsView `json:"counts"`
}

// CreatorWalletView is the verified wallet of a creator profile.
type CreatorWalletView struct {
	// Address is the wallet's base58 public key.
	Address string `json:"address" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// Network is the network the wallet link records; one key holds the address on every cluster of it.
	Network string `json:"network" example:"solana" enum:"solana"`
	// VerifiedAt is when the creator's signature with this wallet verified.
	VerifiedAt time.Time `json:"verifiedAt"`
}

// CreatorCountsView counts a creator's stored rows in one environment.
type CreatorCountsView struct {
	// PublicProjects is how many public projects the creator owns, in every tenant.
	PublicProjects int `json:"publicProjects" example:"3"`
	// Contributions is how many of the creator's submissions were accepted into public projects, in every tenant: the contributions route's items.
	Contributions int `json:"contributions" example:"2"`
}

func creatorView(c creator.Creator, env access.Environment) CreatorView {
	return CreatorView{ID: c.UserID, Object: "creator", DisplayName: c.DisplayName, CreatedAt: c.CreatedAt,
		Wallet:      CreatorWalletView{Address: c.Wallet.Address, Network: c.Wallet.Network, VerifiedAt: c.Wallet.VerifiedAt},
		Environment: string(env), Counts: CreatorCountsView{PublicProjects: c.Counts.PublicProjects, Contributions: c.Counts.Contributions}}
}

// ContributionView is one of a creator's contributions: a submission of
// theirs accepted into a public project.
type ContributionView struct {
	// ID is the submission's id (GET /api/v1/submissions/{id} reads it whole).
	ID string `json:"id" example:"sbm_01jd0000000000000000000000"`
	// Object is always "contribution".
	Object string `json:"object" example:"contribution"`
	// ProjectID is the public project the submission was accepted into.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// ProjectTitle is that project's title.
	ProjectTitle string `json:"projectTitle" example:"Night Drive video"`
	// Type is what the submission is.
	Type string `json:"type" example:"cover_art" enum:"music_video,artwork,animation,remix,short_video,trailer,story,cover_art,audio,other"`
	// Title is the submission's title.
	Title string `json:"title" example:"Night Drive cover"`
	// Description is the submission's description.
	Description string `json:"description" example:"A neon cover for the single."`
	// AssetID is the platform asset (of the submitter's workspace) the work is; null when asset URLs name it.
	AssetID *string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// Assets are the work's parts, in order, as the submission shows them: one per asset URL with what the platform's fetch found, or one holding the platform asset's snapshot.
	Assets []SubmissionAssetView `json:"assets"`
	// SubmittedAt is when the submission was made.
	SubmittedAt time.Time `json:"submittedAt"`
	// AcceptedAt is when the project's reviewer accepted it.
	AcceptedAt time.Time `json:"acceptedAt"`
}

// ContributionPage is one page of a creator's contributions, newest first.
type ContributionPage struct {
	// Items are the page's contributions, newest first (by submission).
	Items []ContributionView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor, with the same filter, to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"c2JtOnNibV8wMWpkOmFiYw"`
}

func contributionView(c creator.Contribution) ContributionView {
	sv := submissionView(c.Submission)
	return ContributionView{ID: sv.ID, Object: "contribution", ProjectID: sv.ProjectID, ProjectTitle: c.ProjectTitle, Type: sv.Type,
		Title: sv.Title, Description: sv.Description, AssetID: sv.AssetID, Assets: sv.Assets, SubmittedAt: sv.CreatedAt,
		AcceptedAt: c.Submission.ReviewedAt}
}

func exampleContribution() ContributionView {
	sv := exampleSubmission()
	return ContributionView{ID: sv.ID, Object: "contribution", ProjectID: sv.ProjectID, ProjectTitle: "Night Drive video", Type: sv.Type,
		Title: sv.Title, Description: sv.Description, Assets: sv.Assets, SubmittedAt: sv.CreatedAt, AcceptedAt: sv.CreatedAt.Add(time.Hour)}
}

// creatorContributionBinding is what a creator's contribution list cursor
// is bound to: the wallet, the caller's environment and the type filter.
// A cursor read under another binding (another wallet, environment or
// type, or a project's submission list) is INVALID_INPUT; the list is
// narrowed to the creator's contributions whatever the cursor says.
func creatorContributionBinding(p *access.Principal, wallet string, f creator.ContributionFilter) string {
	return cursorBinding("creator-contributions", wallet, string(p.Environment), string(f.Type))
}

// creatorListBinding is what a creator's project list cursor is bound to:
// the wallet, the caller's environment and the filters. A cursor read
// under another binding (another wallet, environment or filter, or the
// project list's) is INVALID_INPUT; the list is narrowed to the creator's
// public projects whatever the cursor says.
func creatorListBinding(p *access.Principal, wallet string, f project.Filter) string {
	return cursorBinding("creator-projects", wallet, string(p.Environment), string(f.Status), string(f.Type))
}

// admitWallet refuses a request whose wallet path parameter is not a
// Solana public key, before the credential is read or any database work
// (spec, Challenges and rewards).
func admitWallet(r *http.Request, _ time.Time) error {
	_, err := creator.ParseWallet(r.PathValue("wallet"))
	return err
}

// creatorRoutes are the creator reads (spec, Challenges, creators,
// rewards): a creator's profile, public projects and contributions, found
// by a verified wallet. Any signed-in caller reads them (a session of an
// active member, or an API key with scope read), in the caller's
// environment.
func creatorRoutes(svc *creator.Service) []Route {
	if svc == nil {
		return nil
	}
	const walletRule = " The wallet is a Solana public key, base58 text of 32 bytes; anything else is 400 INVALID_INPUT " +
		"(details.field wallet), answered first, before the credential is read or any database work. The creator is the user " +
		"behind a verified wallet link of that address: the caller's own tenant's link when there is one, else the earliest " +
		"verified link in any tenant (the first account that proved control). An address no account has verified is 404."
	read := func(r Route) Route {
		r.Tag, r.Auth, r.AnyMember, r.Private = transport.TagChallenges, transport.AuthSessionOrKey, true, true
		r.Scope, r.Idempotency, r.AdmitFunc = access.ScopeRead, transport.IdempotencyNone, admitWallet
		r.Description += walletRule
		return r
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ex := CreatorView{ID: "usr_01jd0000000000000000000000", Object: "creator", DisplayName: "Ada Lovelace",
		Wallet:    CreatorWalletView{Address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", Network: "solana", VerifiedAt: t},
		CreatedAt: t, Environment: "live", Counts: CreatorCountsView{PublicProjects: 3, Contributions: 2}}
	return []Route{
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/creators/{wallet}", OperationID: "getCreator",
			Summary: "Get a creator by wallet",
			Description: "A creator's public profile: id (the user id), display name, the wallet with its network and verification " +
				"time, when the account was created, and counts of stored rows in the caller's environment (publicProjects: the " +
				"creator's public projects in every tenant; contributions: their submissions accepted into public projects of every " +
				"tenant, as the contributions route lists them). No email, tenant, workspace or role is shown.",
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				cr, err := svc.Get(ctx, c.Tx, c.Principal, c.PathValue("wallet"))
				if err != nil {
					return nil, err
				}
				return creatorView(cr, c.Principal.Environment), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/creators/{wallet}/projects", OperationID: "listCreatorProjects",
			Summary: "List a creator's public projects",
			Description: "The creator's public projects in every tenant of the caller's environment, newest first (by id). A " +
				"workspace project never appears, whoever asks. Filters: status and type; an unknown one is 400 INVALID_INPUT. limit " +
				"is 1 to 100 (default 20). cursor is the previous page's nextCursor: it is bound to the wallet, the caller's " +
				"environment and the filters, and any other cursor (forged, another wallet's, or read with other filters) is 400 " +
				"INVALID_INPUT.",
			Query: append(pageQuery("cHJqOnByal8wMWpkOmFiYw"),
				transport.Param{Name: "status", Description: "Keeps projects in this status (DRAFT, OPEN, IN_PRODUCTION, REVIEW, COMPLETED, ARCHIVED).", Example: "OPEN"},
				transport.Param{Name: "type", Description: "Keeps projects of this type (music_video, album, single, remix, soundtrack, other).", Example: "music_video"}),
			Response: ProjectPage{Items: []ProjectView{exampleProject()}}, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				w := c.PathValue("wallet")
				f := project.Filter{Status: project.Status(c.Query("status")), Type: project.Type(c.Query("type"))}
				return projectPage(c, creatorListBinding(c.Principal, w, f), func(before string, n int) ([]project.Project, error) {
					return svc.Projects(ctx, c.Tx, c.Principal, w, f, before, n)
				})
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/creators/{wallet}/contributions", OperationID: "listCreatorContributions",
			Summary: "List a creator's contributions",
			Description: "The creator's contributions: their submissions ACCEPTED into public projects of every tenant in the caller's " +
				"environment, newest first (by submission). A submission in any other status (SUBMITTED, UNDER_REVIEW, REJECTED, " +
				"REVISION_REQUESTED) is no contribution, and one accepted into a workspace project never appears, whoever asks: a " +
				"profile is public. Each item carries the submission's public fields and the project's title (the review's note and " +
				"reviewer stay on GET /api/v1/submissions/{id}). type keeps one submission type; an unknown one is 400 INVALID_INPUT. " +
				"limit is 1 to 100 (default 20). cursor is the previous page's nextCursor: it is bound to the wallet, the caller's " +
				"environment and the type, and any other cursor (forged, another wallet's, or read with another type) is 400 " +
				"INVALID_INPUT.",
			Query: append(pageQuery("c2JtOnNibV8wMWpkOmFiYw"),
				transport.Param{Name: "type", Description: "Keeps submissions of this type (music_video, artwork, animation, remix, short_video, trailer, story, cover_art, audio, other).", Example: "cover_art"}),
			Response: ContributionPage{Items: []ContributionView{exampleContribution()}}, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				w := c.PathValue("wallet")
				f := creator.ContributionFilter{Type: project.SubmissionType(c.Query("type"))}
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				binding := creatorContributionBinding(c.Principal, w, f)
				before, err := submissionCursor(c.Query("cursor"), binding)
				if err != nil {
					return nil, err
				}
				cs, err := svc.Contributions(ctx, c.Tx, c.Principal, w, f, before, limit+1)
				if err != nil {
					return nil, err
				}
				page := ContributionPage{Items: []ContributionView{}}
				if len(cs) > limit {
					cs = cs[:limit]
					page.HasMore, page.NextCursor = true, encodeSubmissionCursor(cs[limit-1].Submission.ID, binding)
				}
				for _, x := range cs {
					page.Items = append(page.Items, contributionView(x))
				}
				return page, nil
			}}),
	}
}
