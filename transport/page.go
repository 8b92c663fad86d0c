package transport

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
)

// Page bounds for list routes.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

// PageLimit parses the limit query parameter.
func PageLimit[T Tx](c *Call[T]) (int, error) {
	s := c.Query("limit")
	if s == "" {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxPageLimit {
		return 0, fault.Invalid("transport.PageLimit", "limit", "limit must be an integer from 1 to 100.").With("max", MaxPageLimit)
	}
	return n, nil
}

const cursorPrefix = "cursor:"

// EncodeCursor returns the opaque cursor of a page that ends at lastID.
func EncodeCursor(lastID string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + lastID))
	return &s
}

// DecodeCursor returns the id an opaque cursor stands for; a forged or
// malformed cursor is INVALID_INPUT.
func DecodeCursor[T Tx](c *Call[T], idPrefix string) (string, error) {
	s := c.Query("cursor")
	if s == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	rest, ok := strings.CutPrefix(string(b), cursorPrefix)
	if err != nil || !ok || !id.Valid(idPrefix, rest) {
		return "", fault.Invalid("transport.DecodeCursor", "cursor", "cursor is not a cursor this API returned.")
	}
	return rest, nil
}

// PageOf runs one keyset page of a list route: it reads limit and cursor
// (a forged cursor is INVALID_INPUT), asks list for one item more than the
// page holds to learn whether more follow, and returns the page's items,
// hasMore and the next cursor (nil on the last page).
func PageOf[X Tx, T any](c *Call[X], idPrefix string, list func(cursor string, n int) ([]T, error), idOf func(T) string) ([]T, bool, *string, error) {
	limit, err := PageLimit(c)
	if err != nil {
		return nil, false, nil, err
	}
	cursor, err := DecodeCursor(c, idPrefix)
	if err != nil {
		return nil, false, nil, err
	}
	items, err := list(cursor, limit+1)
	if err != nil {
		return nil, false, nil, err
	}
	if len(items) <= limit {
		return items, false, nil, nil
	}
	items = items[:limit]
	return items, true, EncodeCursor(idOf(items[limit-1])), nil
}

// versionCursorPrefix marks a cursor over integer versions.
const versionCursorPrefix = "version:"

// PageOfVersions is PageOf for lists keyed by an integer version, newest
// first (policy histories): the cursor is opaque like every other, and a
// forged one is INVALID_INPUT.
func PageOfVersions[X Tx, T any](c *Call[X], list func(before, n int) ([]T, error), versionOf func(T) int) ([]T, bool, *string, error) {
	limit, err := PageLimit(c)
	if err != nil {
		return nil, false, nil, err
	}
	before := 0
	if s := c.Query("cursor"); s != "" {
		b, err := base64.RawURLEncoding.DecodeString(s)
		rest, ok := strings.CutPrefix(string(b), versionCursorPrefix)
		n, convErr := strconv.Atoi(rest)
		if err != nil || !ok || convErr != nil || n < 1 {
			return nil, false, nil, fault.Invalid("transport.PageOfVersions", "cursor", "cursor is not a cursor this API returned.")
		}
		before = n
	}
	items, err := list(before, limit+1)
	if err != nil {
		return nil, false, nil, err
	}
	if len(items) <= limit {
		return items, false, nil, nil
	}
	items = items[:limit]
	next := base64.RawURLEncoding.EncodeToString([]byte(versionCursorPrefix + strconv.Itoa(versionOf(items[limit-1]))))
	return items, true, &next, nil
}
