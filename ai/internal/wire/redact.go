package wire

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Redactor removes secrets (the key, the base URL and its host) from text
// that may reach a log.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a Redactor of key and baseURL: the key, the URL, and
// the URL's host with and without its port. Empty values are skipped.
func NewRedactor(key, baseURL string) Redactor {
	var s []string
	add := func(v string) {
		if v != "" {
			s = append(s, v)
		}
	}
	add(key)
	add(strings.TrimRight(baseURL, "/"))
	if u, err := url.Parse(baseURL); err == nil {
		add(u.Host)
		add(u.Hostname())
	}
	// Longest first, so a URL is replaced whole before its host.
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && len(s[j]) > len(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return Redactor{secrets: s}
}

// Text returns s with every secret replaced by "[redacted]".
func (r Redactor) Text(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// Err returns an error whose text is err's, redacted; errors.Is and
// errors.As still reach err.
func (r Redactor) Err(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{msg: r.Text(err.Error()), err: err}
}

// redacted is an error shown through its redacted text.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// Truncate cuts s to at most n bytes on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
