package access

import (
	"strings"

	"github.com/creatormusic/platform/fault"
)

// PathPolicy is the route policy of one surface of the platform's own
// applications (web and studio), as GET /api/v1/access/context evaluates it.
// Prefix matches the path itself and everything below it, segment by
// segment ("/developer" matches "/developer/keys", never "/developerx");
// the root "/" matches the home surface "/" only, so it never lends its
// policy to a path no row lists. The longest matching prefix decides.
type PathPolicy struct {
	Prefix        string
	Permission    Permission
	RequiredRoles []Role
	Entitlement   string
	AnyMember     bool
}

// PathPolicies is the table of application surfaces. A path under no prefix
// fails the route-policy step: access is closed by default.
func PathPolicies() []PathPolicy {
	return []PathPolicy{
		{Prefix: "/", AnyMember: true},
		{Prefix: "/studio", Permission: ProjectRead},
		{Prefix: "/projects", Permission: ProjectRead},
		{Prefix: "/developer", Permission: DeveloperPortalRead, RequiredRoles: []Role{RoleDeveloper}},
		{Prefix: "/developer/keys", Permission: DeveloperAPIKeyRead, RequiredRoles: []Role{RoleDeveloper}},
		{Prefix: "/developer/providers", Permission: DeveloperProviderRead, RequiredRoles: []Role{RoleDeveloper}},
		{Prefix: "/developer/usage", Permission: DeveloperUsageRead, RequiredRoles: []Role{RoleDeveloper}},
		{Prefix: "/admin", Permission: MemberManage},
		{Prefix: "/admin/audit", Permission: AuditRead},
		{Prefix: "/billing", Permission: BillingRead},
		{Prefix: "/treasury", Permission: TreasuryRead},
		{Prefix: "/rewards", Permission: RewardClaim},
		{Prefix: "/marketplace/sell", Permission: MarketplaceCreateListing, Entitlement: "marketplace.sell"},
	}
}

// MaxPathLen bounds a path submitted for an access decision.
const MaxPathLen = 512

// NormalizedPath checks that p is a normalized internal path: absolute, no
// scheme or host, no query or fragment, no empty, "." or ".." segment, no
// percent-encoding, no trailing slash except the root, only letters, digits
// and "-", "_", "." in segments, at most MaxPathLen bytes.
func NormalizedPath(p string) error {
	const op = "access.NormalizedPath"
	bad := func() error {
		return fault.Invalid(op, "path", "path must be a normalized internal path such as /developer/keys.")
	}
	if p == "" || len(p) > MaxPathLen || p[0] != '/' {
		return bad()
	}
	if p == "/" {
		return nil
	}
	if strings.HasSuffix(p, "/") {
		return bad()
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return bad()
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
			if !ok {
				return bad()
			}
		}
	}
	return nil
}

// PolicyFor returns the policy of the longest prefix matching p, and
// whether one matched.
func PolicyFor(p string) (PathPolicy, bool) {
	var best PathPolicy
	found := false
	for _, pp := range PathPolicies() {
		if p == pp.Prefix || pp.Prefix != "/" && strings.HasPrefix(p, pp.Prefix+"/") {
			if !found || len(pp.Prefix) > len(best.Prefix) {
				best, found = pp, true
			}
		}
	}
	return best, found
}
