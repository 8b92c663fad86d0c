package x402

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/money"
)

// Kind is what a resource sells one use of.
type Kind string

// The kinds of resource.
const (
	// KindSoundAnalysis is one analysis by the sound engine: a grant of
	// this kind is consumed by POST /api/v1/sound/analyze naming it.
	KindSoundAnalysis Kind = "sound_analysis"
)

// Kinds lists every kind.
func Kinds() []Kind { return []Kind{KindSoundAnalysis} }

// Resource is an offer bought per use: one use of its kind for Amount
// atomic units of the environment's asset.
type Resource struct {
	// ID names the resource in routes ("sound-analysis"): 1 to 64
	// characters of [a-z0-9-].
	ID string
	// Kind is what one use is.
	Kind Kind
	// Description says what is bought.
	Description string
	// Amount is the exact price in atomic units; never zero.
	Amount money.Atomic
}

// resourceID is the grammar of a resource id.
var resourceID = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// Validate checks r.
func (r Resource) Validate() error {
	switch {
	case !resourceID.MatchString(r.ID):
		return fmt.Errorf("x402: resource id %q is not 1 to 64 characters of [a-z0-9-]", r.ID)
	case !slices.Contains(Kinds(), r.Kind):
		return fmt.Errorf("x402: resource %s: unknown kind %q", r.ID, r.Kind)
	case r.Description == "":
		return fmt.Errorf("x402: resource %s has no description", r.ID)
	case r.Amount == 0:
		return fmt.Errorf("x402: resource %s has no price", r.ID)
	}
	return nil
}

// Memos. The requirements a signed-in caller reads name a memo that binds
// the payment to the caller's workspace and environment and to the
// resource: "x402:<resource id>:<nonce>:<tag>", where the nonce is 16
// random hex characters (so two purchases never make one transaction)
// and the tag is the first 32 hex characters of HMAC-SHA256 under the
// memo key of the scope, the resource and the nonce. Nothing is stored:
// a payment whose memo's tag does not verify for the caller was not built
// from the caller's requirements (someone else's payload, replayed under
// another workspace), and is refused.

// memoPrefix starts every memo the platform issues.
const memoPrefix = "x402:"

// issueMemo returns a fresh memo of scope for resource id.
func issueMemo(key []byte, sc access.Scope, id string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand does not fail
	nonce := hex.EncodeToString(b)
	return memoPrefix + id + ":" + nonce + ":" + memoTag(key, sc, id, nonce)
}

// memoTag is the tag of scope, resource and nonce.
func memoTag(key []byte, sc access.Scope, id, nonce string) string {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{"x402-memo/v1", sc.TenantID, sc.WorkspaceID, string(sc.Environment), id, nonce} {
		fmt.Fprintf(m, "%d:%s|", len(part), part)
	}
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// memoResource returns the resource id of memo when it is a memo the
// platform issued to scope; ok is false otherwise.
func memoResource(key []byte, sc access.Scope, memo string) (id string, ok bool) {
	rest, found := strings.CutPrefix(memo, memoPrefix)
	if !found {
		return "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 || len(parts[1]) != 16 || len(parts[2]) != 32 {
		return "", false
	}
	want := memoTag(key, sc, parts[0], parts[1])
	if !hmac.Equal([]byte(want), []byte(parts[2])) {
		return "", false
	}
	return parts[0], true
}
