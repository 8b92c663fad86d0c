package transport

import (
	"net/http"
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestStatusTableCoversEveryCode(t *testing.T) {
	known := map[fault.Code]bool{}
	for _, c := range fault.Codes() {
		known[c] = true
		row, ok := statusTable[c]
		if !ok {
			t.Errorf("code %s has no row in the status table", c)
			continue
		}
		if row.status < 400 || row.status > 599 {
			t.Errorf("code %s maps to %d, not a failure status", c, row.status)
		}
		if row.status == http.StatusPaymentRequired {
			t.Errorf("code %s maps to 402, which the platform never uses", c)
		}
		if row.description == "" {
			t.Errorf("code %s has no description", c)
		}
	}
	rows := statusRows()
	if len(rows) != len(statusTable) {
		t.Errorf("status rows hold %d entries for %d codes: a code is listed twice", len(rows), len(statusTable))
	}
	for c := range statusTable {
		if !known[c] {
			t.Errorf("status table row %s is not in fault.Codes()", c)
		}
	}
}

func TestStatusOf(t *testing.T) {
	tests := map[fault.Code]int{
		fault.InvalidInput:             400,
		fault.InvalidAmount:            400,
		fault.IdempotencyKeyRequired:   400,
		fault.Unauthenticated:          401,
		fault.SessionExpired:           401,
		fault.ReauthenticationRequired: 401,
		fault.SubscriptionRequired:     403,
		fault.EntitlementRequired:      403,
		fault.FeatureDisabled:          403,
		fault.AccessDenied:             403,
		fault.WorkspaceAccessDenied:    403,
		fault.NotFound:                 404,
		fault.RouteNotFound:            404,
		fault.MethodNotAllowed:         405,
		fault.IdempotencyConflict:      409,
		fault.IdempotencyInProgress:    409,
		fault.Conflict:                 409,
		fault.ResultNotReady:           409,
		fault.InvalidState:             409,
		fault.QuoteMismatch:            409,
		fault.TermsMismatch:            409,
		fault.ResultExpired:            410,
		fault.QuoteExpired:             410,
		fault.PayloadTooLarge:          413,
		fault.UnsupportedMediaType:     415,
		fault.CapabilityUnsupported:    422,
		fault.URLNotAllowed:            422,
		fault.InsufficientCredits:      422,
		fault.InsufficientBalance:      422,
		fault.WalletRequired:           422,
		fault.WalletMismatch:           422,
		fault.NetworkMismatch:          422,
		fault.TokenNotTrusted:          422,
		fault.SlippageOutOfPolicy:      422,
		fault.PriceImpactExceeded:      422,
		fault.ContentPolicyRejected:    422,
		fault.RateLimited:              429,
		fault.Internal:                 500,
		fault.ProviderUnavailable:      503,
		fault.BalanceUnavailable:       503,
		fault.ServiceUnavailable:       503,
		fault.ProviderTimeout:          504,
		fault.Code("NOT_A_CODE"):       500,
	}
	for code, want := range tests {
		if got := StatusOf(code); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", code, got, want)
		}
	}
}

func TestCodeDescriptionsGroupEveryCode(t *testing.T) {
	n := 0
	for status, codes := range CodeDescriptions() {
		for _, c := range codes {
			if StatusOf(c) != status {
				t.Errorf("code %s listed under %d, maps to %d", c, status, StatusOf(c))
			}
			n++
		}
	}
	if n != len(fault.Codes()) {
		t.Errorf("codeDescriptions lists %d codes, want %d", n, len(fault.Codes()))
	}
}
