package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers every delivery carries.
const (
	// HeaderID is the event's id: the same on every attempt and to every
	// endpoint, so a receiver deduplicates by it.
	HeaderID = "webhook-id"
	// HeaderTimestamp is the attempt's time, integer Unix seconds.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature is one "v1,<base64 HMAC-SHA256>" per signing secret,
	// space-separated: the current secret's first and, during a rotation's
	// overlap, the previous secret's after it.
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts a signing secret: "whsec_" and the standard base64
// of SecretBytes random bytes, as the Standard Webhooks specification
// serializes symmetric secrets. The HMAC key is the decoded bytes.
const SecretPrefix = "whsec_"

// SecretBytes is a signing secret's length in bytes (256 bits; the
// specification asks for 24 to 64).
const SecretBytes = 32

// DefaultTolerance is how far a delivery's timestamp may lie from the
// receiver's clock, either way, for Verify to accept it (the
// specification's reference libraries use 5 minutes).
const DefaultTolerance = 5 * time.Minute

// newSecret returns a new signing secret.
func newSecret() string {
	b := make([]byte, SecretBytes)
	if _, err := rand.Read(b); err != nil {
		panic("webhook: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// secretKey returns the HMAC key of a signing secret: its base64 part,
// decoded.
func secretKey(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errors.New("webhook: a signing secret starts with " + SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) == 0 {
		return nil, errors.New("webhook: a signing secret's key is standard base64")
	}
	return key, nil
}

// signature returns "v1," and the base64 HMAC-SHA256 of id.timestamp.body
// under key.
func signature(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Sign returns the webhook-signature header value of a delivery signed
// with each of secrets, in order: "v1,<sig>" space-separated.
func Sign(secrets []string, id string, ts time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, signature(key, id, ts.Unix(), body))
	}
	return strings.Join(sigs, " "), nil
}

// Errors of Verify.
var (
	// ErrMissingHeaders: webhook-id, webhook-timestamp or webhook-signature
	// is missing, or the timestamp is not an integer.
	ErrMissingHeaders = errors.New("webhook: missing or malformed webhook headers")
	// ErrTimestamp: the timestamp lies outside the tolerance.
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
	// ErrSignature: no v1 signature of the header matches the secret.
	ErrSignature = errors.New("webhook: no matching signature")
)

// Verify checks a received delivery as the Standard Webhooks
// specification says: the three headers present, the timestamp within
// tolerance of now (either way; zero means DefaultTolerance), and one of
// the header's v1 signatures equal, in constant time, to the HMAC-SHA256
// of id.timestamp.body under secret. It is for receivers written in Go
// (examples/webhookrecv uses it); body must be the raw bytes received.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if id == "" || sigs == "" || err != nil {
		return ErrMissingHeaders
	}
	if d := now.Unix() - ts; math.Abs(float64(d)) > tolerance.Seconds() {
		return ErrTimestamp
	}
	want := signature(key, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}
