package transport

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/fault"
)

type decodeLimits struct {
	RatePerMinute int  `json:"ratePerMinute"`
	Burst         *int `json:"burst,omitempty"`
}

type decodeItem struct {
	Name string `json:"name"`
}

type decodeBase struct {
	Label string `json:"label,omitempty"`
}

type decodeTarget struct {
	decodeBase
	Name    string            `json:"name"`
	Limits  decodeLimits      `json:"limits"`
	Items   []decodeItem      `json:"items,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
	At      time.Time         `json:"at,omitzero"`
	Payload []byte            `json:"payload,omitempty"`
	Any     any               `json:"any,omitempty"`
	Skipped string            `json:"-"`
}

// decodeCall returns a call whose request has the content type and body.
func decodeCall(contentType, body string) *Call[Tx] {
	r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	c := &Call[Tx]{Request: r, fields: &fieldIndex{}}
	c.setBody([]byte(body))
	return c
}

// The per-route index resolves keys as FieldByJSONName does, from its
// memo after the first lookup, and a nil index resolves them unmemoized.
func TestFieldIndexResolvesLikeReflection(t *testing.T) {
	typ := reflect.TypeOf(decodeTarget{})
	x := &fieldIndex{}
	var none *fieldIndex
	for round := 0; round < 2; round++ {
		for _, key := range []string{"name", "limits", "items", "tags", "at", "payload", "any", "Skipped", "Name", "nope"} {
			want, wantOK := FieldByJSONName(typ, key)
			for _, ix := range []*fieldIndex{x, none} {
				got, ok := ix.field(typ, key)
				if ok != wantOK || got.Name != want.Name || got.Type != want.Type {
					t.Errorf("round %d, key %q: got %+v %v, want %+v %v", round, key, got, ok, want, wantOK)
				}
			}
		}
	}
}

func TestDecodeFailures(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        string
		code        fault.Code
		details     map[string]any
	}{
		{"unknown top-level field", "application/json", `{"name":"a","nmae":"b"}`, fault.InvalidInput, map[string]any{"field": "nmae"}},
		{"unknown nested field", "application/json", `{"name":"a","limits":{"ratePerMinute":1,"ratePerMinut":2}}`, fault.InvalidInput, map[string]any{"field": "limits.ratePerMinut"}},
		{"unknown field in array element", "application/json", `{"items":[{"name":"a"},{"name":"b"},{"name":"c","nam":1}]}`, fault.InvalidInput, map[string]any{"field": "items[2].nam"}},
		{"field names are case sensitive", "application/json", `{"Name":"a"}`, fault.InvalidInput, map[string]any{"field": "Name"}},
		{"ignored field is unknown", "application/json", `{"Skipped":"a"}`, fault.InvalidInput, map[string]any{"field": "Skipped"}},
		{"type mismatch nested", "application/json", `{"limits":{"ratePerMinute":"ten"}}`, fault.InvalidInput, map[string]any{"field": "limits.ratePerMinute"}},
		{"type mismatch in array", "application/json", `{"items":[{"name":"a"},{"name":7}]}`, fault.InvalidInput, map[string]any{"field": "items[1].name"}},
		{"fraction into int", "application/json", `{"limits":{"ratePerMinute":1.5}}`, fault.InvalidInput, map[string]any{"field": "limits.ratePerMinute"}},
		{"map value mismatch", "application/json", `{"tags":{"a":"x","b":2}}`, fault.InvalidInput, map[string]any{"field": "tags.b"}},
		{"time must be a string", "application/json", `{"at":5}`, fault.InvalidInput, map[string]any{"field": "at"}},
		{"bad time", "application/json", `{"at":"yesterday"}`, fault.InvalidInput, map[string]any{"field": "at"}},
		{"body not an object", "application/json", `[1,2]`, fault.InvalidInput, map[string]any{"field": ""}},
		{"trailing data", "application/json", `{"name":"a"} x`, fault.InvalidInput, map[string]any{"offset": int64(12)}},
		{"two values", "application/json", `{"name":"a"}{"name":"b"}`, fault.InvalidInput, map[string]any{"offset": int64(12)}},
		{"syntax error", "application/json", `{"name":"a",}`, fault.InvalidInput, map[string]any{"offset": int64(13)}},
		{"truncated", "application/json", `{"name":`, fault.InvalidInput, map[string]any{"offset": int64(8)}},
		{"empty body", "application/json", ``, fault.InvalidInput, map[string]any{"field": ""}},
		{"white space body", "application/json", " \n ", fault.InvalidInput, map[string]any{"field": ""}},
		{"NUL in a string", "application/json", `{"name":"a\u0000b"}`, fault.InvalidInput, map[string]any{"field": "name", "reason": ReasonControlCharacter}},
		{"backspace in an array element", "application/json", `{"items":[{"name":"a"},{"name":"\b"}]}`, fault.InvalidInput, map[string]any{"field": "items[1].name"}},
		{"control in a map value", "application/json", `{"tags":{"a":"x","b":"\u001f"}}`, fault.InvalidInput, map[string]any{"field": "tags.b"}},
		{"control in a nested key", "application/json", `{"tags":{"a\u0000":"x"}}`, fault.InvalidInput, map[string]any{"field": "tags"}},
		{"control in a top-level key", "application/json", `{"na\u0000me":"x"}`, fault.InvalidInput, map[string]any{"field": ""}},
		{"control inside any", "application/json", `{"name":"a","any":{"x":[1,{"y":"\u0007"}]}}`, fault.InvalidInput, map[string]any{"field": "any.x[1].y"}},
		{"control after nested values", "application/json", `{"limits":{"ratePerMinute":1},"items":[{"name":"a"}],"label":"\u0000"}`, fault.InvalidInput, map[string]any{"field": "label"}},
		{"wrong content type", "text/plain", `{"name":"a"}`, fault.UnsupportedMediaType, map[string]any{"contentType": "text/plain"}},
		{"missing content type", "", `{"name":"a"}`, fault.UnsupportedMediaType, map[string]any{"contentType": ""}},
		{"json suffix type is not json", "application/problem+json", `{"name":"a"}`, fault.UnsupportedMediaType, map[string]any{"contentType": "application/problem+json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v decodeTarget
			err := decodeCall(tt.contentType, tt.body).Decode(&v)
			var fe *fault.Error
			if !errors.As(err, &fe) {
				t.Fatalf("Decode() error = %v, want a *fault.Error", err)
			}
			if fe.Code != tt.code {
				t.Errorf("code = %s, want %s (%v)", fe.Code, tt.code, err)
			}
			if StatusOf(fe.Code) < 400 {
				t.Errorf("status %d is not a failure", StatusOf(fe.Code))
			}
			if tt.details == nil {
				return
			}
			for k, want := range tt.details {
				if diff := cmp.Diff(want, fe.Details[k]); diff != "" {
					t.Errorf("details[%q] (-want +got):\n%s\nerror: %v", k, diff, err)
				}
			}
			if fe.Message == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestDecodeValid(t *testing.T) {
	body := `{"label":"l","name":"a","limits":{"ratePerMinute":60,"burst":null},"items":[{"name":"x"}],` +
		`"tags":{"k":"v"},"at":"2026-01-02T03:04:05.678Z","payload":"aGk=","any":{"free":[1,"form"]}}` + "\n\t "
	var got decodeTarget
	if err := decodeCall("application/json; charset=utf-8", body).Decode(&got); err != nil {
		t.Fatalf("Decode() = %v", err)
	}
	want := decodeTarget{
		decodeBase: decodeBase{Label: "l"},
		Name:       "a",
		Limits:     decodeLimits{RatePerMinute: 60},
		Items:      []decodeItem{{Name: "x"}},
		Tags:       map[string]string{"k": "v"},
		At:         time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC),
		Payload:    []byte("hi"),
		Any:        map[string]any{"free": []any{1.0, "form"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(decodeTarget{})); diff != "" {
		t.Errorf("Decode() (-want +got):\n%s", diff)
	}
}

func TestDecodeRejectsNonPointer(t *testing.T) {
	var v decodeTarget
	err := decodeCall("application/json", `{}`).Decode(v)
	if fault.CodeOf(err) != fault.Internal {
		t.Errorf("Decode(non-pointer) code = %s, want INTERNAL", fault.CodeOf(err))
	}
}

func TestReadBody(t *testing.T) {
	t.Run("within limit", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("0123456789"))
		b, err := readBody(r, 10)
		if err != nil || string(b) != "0123456789" {
			t.Errorf("readBody() = %q, %v", b, err)
		}
	})
	t.Run("over limit with length", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("0123456789x"))
		_, err := readBody(r, 10)
		assertTooLarge(t, err, 10)
	})
	t.Run("over limit without length", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("0123456789x"))
		r.ContentLength = -1
		_, err := readBody(r, 10)
		assertTooLarge(t, err, 10)
	})
	t.Run("default limit", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(strings.Repeat("a", DefaultBodyLimit+1)))
		r.ContentLength = -1
		_, err := readBody(r, 0)
		assertTooLarge(t, err, DefaultBodyLimit)
	})
	t.Run("no body", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/x", nil)
		b, err := readBody(r, 10)
		if err != nil || len(b) != 0 {
			t.Errorf("readBody() = %q, %v", b, err)
		}
	})
}

// assertTooLarge checks a PAYLOAD_TOO_LARGE error and its limit detail.
func assertTooLarge(t *testing.T, err error, limit int64) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.PayloadTooLarge {
		t.Fatalf("error = %v, want PAYLOAD_TOO_LARGE", err)
	}
	if got := fe.Details["limit"]; got != limit {
		t.Errorf("details.limit = %v, want %d", got, limit)
	}
	if StatusOf(fe.Code) != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d, want 413", StatusOf(fe.Code))
	}
}

// TestDecodeKeepsTextWhitespace: free text keeps tab, line feed and
// carriage return, and escapes of other characters are not controls.
func TestDecodeKeepsTextWhitespace(t *testing.T) {
	body := `{"name":"verse\tone\r\nchorus \"two\" \\ \/ \u00e9","items":[{"name":"\n"}],"tags":{"k":"\u0020"}}`
	var got decodeTarget
	if err := decodeCall("application/json", body).Decode(&got); err != nil {
		t.Fatalf("Decode() = %v", err)
	}
	if got.Name != "verse\tone\r\nchorus \"two\" \\ / é" || got.Items[0].Name != "\n" || got.Tags["k"] != " " {
		t.Fatalf("Decode() = %+v", got)
	}
}

// TestCheckRequestText: path values and query parameters holding a control
// character or invalid UTF-8 are INVALID_INPUT naming the parameter.
func TestCheckRequestText(t *testing.T) {
	rt := Route[Tx]{Method: http.MethodGet, Pattern: "/api/v1/things/{thingId}/parts/{rest...}", Query: []Param{{Name: "limit"}, {Name: "cursor"}, {Name: "q"}}}
	for _, tc := range []struct {
		target string
		field  string // empty: accepted
	}{
		{"/api/v1/things/thg_1/parts/a/b?limit=10&cursor=abc", ""},
		{"/api/v1/things/thg_%C3%A9/parts/x?q=caf%C3%A9", ""},
		{"/api/v1/things/thg%00/parts/x", "thingId"},
		{"/api/v1/things/thg_1/parts/a%0Ab", "rest"},
		{"/api/v1/things/thg%FF/parts/x", "thingId"},
		{"/api/v1/things/thg_1/parts/x?limit=10&cursor=a%00", "cursor"},
		{"/api/v1/things/thg_1/parts/x?cursor=%7F", "cursor"},
		{"/api/v1/things/thg_1/parts/x?cursor=%C2%85", "cursor"},
		{"/api/v1/things/thg_1/parts/x?cur%00sor=1&other=%00", ""}, // not the route's: ignored
	} {
		mux := http.NewServeMux()
		var err error
		mux.HandleFunc(rt.Method+" "+rt.Pattern, func(w http.ResponseWriter, r *http.Request) { err = checkRequestText(r, rt) })
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: the mux answered %d", tc.target, rec.Code)
		}
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.target, err)
			}
			continue
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Details["field"] != tc.field || fe.Details["reason"] != ReasonControlCharacter {
			t.Errorf("%s: %v, want INVALID_INPUT on %s", tc.target, err, tc.field)
		}
	}
}
