package creator

import (
	"context"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

// Creator is the person behind a verified wallet, as the public sees them.
type Creator struct {
	// UserID is the creator's id: the user the standing link belongs to.
	UserID string
	// DisplayName is the user's display name.
	DisplayName string
	// CreatedAt is when the user's account was created (member since).
	CreatedAt time.Time
	// Wallet is the standing link's wallet.
	Wallet Wallet
	// Counts are counts of the creator's rows in one environment; Get
	// fills them.
	Counts Counts
}

// Wallet is a verified wallet of a creator.
type Wallet struct {
	// Address is the base58 public key.
	Address string
	// Network is the network the link records (wallet.Network).
	Network string
	// VerifiedAt is when the link's signature verified.
	VerifiedAt time.Time
}

// Counts are counts of stored rows of one creator in one environment.
type Counts struct {
	// PublicProjects counts the creator's public projects in every tenant.
	PublicProjects int
	// Contributions counts the creator's contributions (package doc,
	// Contributions) in every tenant.
	Contributions int
}

// Contribution is one of a creator's contributions: a submission of
// theirs ACCEPTED into a public project (package doc, Contributions).
type Contribution struct {
	// Submission is the accepted submission, with its links.
	Submission project.Submission
	// ProjectTitle is the title of the project it was accepted into, as
	// the project reads now.
	ProjectTitle string
}

// ContributionFilter narrows a creator's contributions.
type ContributionFilter struct {
	// Type keeps only submissions of this type; "" keeps all.
	Type project.SubmissionType
}

// Validate reports an unknown type as INVALID_INPUT with details.field
// "type".
func (f ContributionFilter) Validate() error {
	if f.Type != "" && !slices.Contains(project.SubmissionTypes(), f.Type) {
		return fault.Invalid("creator.ContributionFilter", "type", "type must be one of music_video, artwork, animation, remix, "+
			"short_video, trailer, story, cover_art, audio, other.")
	}
	return nil
}

// Lookup names the link a reader asks for (package doc, Which link
// stands).
type Lookup struct {
	// Network and Address identify the wallet.
	Network, Address string
	// ReaderTenantID is the reader's tenant, whose own link stands first.
	ReaderTenantID string
}

// Store is what the package reads; store.Tx implements it on the read
// pool. Errors are *fault.Error.
type Store interface {
	// CreatorByWallet returns the creator behind the link that stands for
	// q (package doc, Which link stands), without counts. NOT_FOUND when
	// no link holds the address.
	CreatorByWallet(ctx context.Context, q Lookup) (Creator, error)
	// CreatorCounts counts userID's rows in env.
	CreatorCounts(ctx context.Context, env access.Environment, userID string) (Counts, error)
	// ProjectListPublic returns up to limit public projects of every
	// tenant in env matching f's status, type and creator, newest first,
	// with ids below before ("" for the newest). (The project package's
	// port has the same method.)
	ProjectListPublic(ctx context.Context, env access.Environment, f project.Filter, before string, limit int) ([]project.Project, error)
	// ContributionList returns up to limit contributions of userID in env
	// (ACCEPTED submissions of theirs to public projects of every tenant)
	// matching f, newest first by submission id, with ids below before
	// ("" for the newest), each with its links.
	ContributionList(ctx context.Context, env access.Environment, userID string, f ContributionFilter, before string, limit int) ([]Contribution, error)
}

// Service reads creators. It holds no state and is safe for concurrent
// use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// ParseWallet returns the base58 text of the Solana public key s: s must
// decode to exactly 32 bytes. INVALID_INPUT with details.field "wallet"
// otherwise. It reads nothing.
func ParseWallet(s string) (string, error) {
	const op = "creator.ParseWallet"
	k, err := token2022.ParsePublicKey(s)
	if err != nil {
		e := fault.Invalid(op, "wallet", "wallet must be a Solana public key: base58 text of 32 bytes.")
		e.Err = err
		return "", e
	}
	return k.String(), nil
}

// Get returns the creator behind wallet as p reads it, with the counts of
// p's environment. INVALID_INPUT (field wallet) for a wallet that is not a
// public key, before any store call; NOT_FOUND when no verified link
// holds it.
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, wallet string) (Creator, error) {
	const op = "creator.Get"
	addr, err := ParseWallet(wallet)
	if err != nil {
		return Creator{}, err
	}
	c, err := s.find(ctx, st, p, addr)
	if err != nil {
		return Creator{}, err
	}
	if c.Counts, err = st.CreatorCounts(ctx, p.Environment, c.UserID); err != nil {
		return Creator{}, fault.Wrap(op, err)
	}
	return c, nil
}

// Projects returns up to limit public projects of the creator behind
// wallet in p's environment, in every tenant, matching f's status and
// type, newest first, with ids below before (package doc, Projects).
// f's creator, reader and visibility are set here. INVALID_INPUT for a bad
// wallet (before any store call) or filter; NOT_FOUND when no verified
// link holds the wallet.
func (s *Service) Projects(ctx context.Context, st Store, p *access.Principal, wallet string, f project.Filter, before string, limit int) ([]project.Project, error) {
	const op = "creator.Projects"
	f.CreatorUserID, f.ReaderUserID, f.Visibility = "", "", project.VisibilityPublic
	addr, err := ParseWallet(wallet)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	c, err := s.find(ctx, st, p, addr)
	if err != nil {
		return nil, err
	}
	f.CreatorUserID = c.UserID
	out, err := st.ProjectListPublic(ctx, p.Environment, f, before, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// Contributions returns up to limit contributions of the creator behind
// wallet in p's environment (package doc, Contributions), matching f,
// newest first, with submission ids below before. INVALID_INPUT for a bad
// wallet (before any store call) or filter; NOT_FOUND when no verified
// link holds the wallet.
func (s *Service) Contributions(ctx context.Context, st Store, p *access.Principal, wallet string, f ContributionFilter, before string, limit int) ([]Contribution, error) {
	const op = "creator.Contributions"
	addr, err := ParseWallet(wallet)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	c, err := s.find(ctx, st, p, addr)
	if err != nil {
		return nil, err
	}
	out, err := st.ContributionList(ctx, p.Environment, c.UserID, f, before, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// find reads the creator behind the link of addr (a ParseWallet result)
// that stands for p.
func (s *Service) find(ctx context.Context, st Store, p *access.Principal, addr string) (Creator, error) {
	const op = "creator.find"
	if p == nil || p.UserID == "" {
		return Creator{}, fault.E(op, fault.Unauthenticated, "")
	}
	c, err := st.CreatorByWallet(ctx, Lookup{Network: wallet.Network, Address: addr, ReaderTenantID: p.TenantID})
	if fault.Is(err, fault.NotFound) {
		return Creator{}, fault.E(op, fault.NotFound, "No creator has verified this wallet.")
	}
	if err != nil {
		return Creator{}, fault.Wrap(op, err)
	}
	return c, nil
}
