package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// TestRotateOverlapIsBounded: a rotation overlap of more seconds than a
// time.Duration holds used to wrap to a negative overlap (the current
// secret expired at once, in the past). It is INVALID_INPUT naming the
// field, the key keeps its secret, and the document publishes the bounds.
func TestRotateOverlapIsBounded(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		_, k := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "ci", "scopes": []string{"keys:read"}}, "")
		rotate := func(sec int64) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k.Key.ID + "/rotate", Key: s.Boot.TestKey,
				Body: map[string]any{"expireCurrentAfterSeconds": sec}})
		}
		for _, sec := range []int64{9_223_372_037, 604_801, -1} {
			if r := rotate(sec); r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "field") != "expireCurrentAfterSeconds" {
				t.Fatalf("overlap %d: %d %s", sec, r.Status, r.Body)
			}
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: k.Secret}); r.Status != 200 {
			t.Fatalf("the key's secret after refused rotations: %d %s", r.Status, r.Body)
		}
		if r := rotate(604_800); r.Status != 200 {
			t.Fatalf("the maximum overlap: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: k.Secret}); r.Status != 200 {
			t.Fatalf("the rotated-out secret within the overlap: %d %s", r.Status, r.Body)
		}
		prop := schemaProperty(t, s, "RotateInput", "expireCurrentAfterSeconds")
		if prop["minimum"] != float64(0) || prop["maximum"] != float64(604_800) {
			t.Fatalf("published schema %v, want minimum 0 and maximum 604800", prop)
		}
	})
}

// schemaProperty returns a property of a component schema of the served
// document.
func schemaProperty(t *testing.T, s *platformtest.System, schema, prop string) map[string]any {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/docs/openapi.json"})
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	p, ok := doc.Components.Schemas[schema].Properties[prop]
	if !ok {
		names := []string{}
		for n := range doc.Components.Schemas {
			names = append(names, n)
		}
		t.Fatalf("no property %s.%s in the document (schemas %v)", schema, prop, names)
	}
	return p
}

// TestFeeMinimumIsBounded: the marketplace minimum fee had no upper bound
// (2^128 atomic units was published); above 10^18 it is INVALID_INPUT
// naming the field with the maximum, and no version is stored.
func TestFeeMinimumIsBounded(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		sam := signIn(t, s, "sam@example.test", "Sam")
		onboard(t, s, &sam, "Sam Studio")
		if err := s.P.GrantSuperAdmin(context.Background(), sam.email); err != nil {
			t.Fatal(err)
		}
		cookie, _ := s.Login(sam.email, testPassword)
		put := func(key, minimum string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPut, Path: "/api/v1/admin/fees/marketplace", Cookie: cookie,
				Body: map[string]any{"feeBps": 500, "minimumFeeAtomic": minimum}, Header: map[string]string{"Idempotency-Key": key}})
		}
		for i, bad := range []string{"1000000000000000001", "340282366920938463463374607431768211456"} {
			r := put(fmt.Sprint("fee-bad-", i), bad)
			if r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "field") != "minimumFeeAtomic" || detail(r, "max") != "1000000000000000000" {
				t.Fatalf("minimum %s: %d %s", bad, r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = ?`, billing.FeePolicyID); n != 0 {
			t.Fatalf("refused publishes stored %d versions", n)
		}
		if r := put("fee-cap", "1000000000000000000"); r.Status != http.StatusCreated {
			t.Fatalf("minimum at the cap: %d %s", r.Status, r.Body)
		}
	})
}

// TestControlCharactersAreRefused: NUL in a login email, a signup name, a
// path id or a query parameter reached the database (PostgreSQL refuses
// U+0000 in text) and answered 500, logging an error per request, without
// any credential on the auth routes. Each is 400 INVALID_INPUT naming the
// field, and nothing is logged at error level.
func TestControlCharactersAreRefused(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		for _, tc := range []struct {
			name  string
			req   platformtest.Request
			field string
		}{
			{"login email", platformtest.Request{Method: "POST", Path: "/api/v1/auth/login",
				Body: `{"email":"a\u0000@example.test","password":"correct horse battery staple"}`}, "email"},
			{"signup name", platformtest.Request{Method: "POST", Path: "/api/v1/auth/signup",
				Body: `{"email":"nul@example.test","password":"correct horse battery staple","name":"N\u0000L"}`}, "name"},
			{"key id", platformtest.Request{Method: "GET", Path: "/api/v1/api-keys/key%00", Key: s.Boot.TestKey}, "keyId"},
			{"key id, invalid UTF-8", platformtest.Request{Method: "GET", Path: "/api/v1/api-keys/key_%FF", Key: s.Boot.TestKey}, "keyId"},
			{"query parameter", platformtest.Request{Method: "GET", Path: "/api/v1/access/context?path=/developer%00/keys", Key: s.Boot.TestKey}, "path"},
			{"unauthenticated query parameter", platformtest.Request{Method: "GET", Path: "/api/v1/api-keys?cursor=%00"}, "cursor"},
		} {
			r := s.Do(tc.req)
			if r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "field") != tc.field || detail(r, "reason") != "control_character" {
				t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
			}
		}
		// Free text keeps its line breaks and tabs.
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: s.Boot.TestKey,
			Body: `{"name":"line one\nline two\tend","scopes":["keys:read"]}`})
		if r.Status != 201 {
			t.Errorf("a name with a line feed and a tab: %d %s", r.Status, r.Body)
		}
		// Routes outside the JSON gateway (provider callbacks) get the same
		// check on their path values.
		resp, err := http.Post(s.Server.URL+"/internal/providers/MUSIC_PROVIDER_A/callbacks/tok%00en", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || resp.StatusCode != 400 || env.Error.Code != "INVALID_INPUT" ||
			env.Error.Details["reason"] != "control_character" {
			t.Errorf("callback token with NUL: %d %+v %v", resp.StatusCode, env, err)
		}
		resp.Body.Close()
		for _, line := range strings.Split(s.Log.String(), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) {
				t.Errorf("logged at error level: %s", line)
			}
		}
	})
}

// TestLargeTransfersOutliveServerTimeouts: behind a server whose read and
// write timeouts suit ordinary requests (200 ms here), an upload whose
// body pauses past them and a download read slowly past them still
// complete, on the deadlines the gateway gives them from their size; an
// ordinary JSON request that stalls its body past the read timeout is cut.
func TestLargeTransfersOutliveServerTimeouts(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		const short, pause = 200 * time.Millisecond, 500 * time.Millisecond
		srv := &http.Server{Handler: s.P.Handler(), ReadHeaderTimeout: short, ReadTimeout: short, WriteTimeout: short}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		defer srv.Close()
		send := func(method, path, contentType string, body []byte, stallAt int) (*http.Response, []byte, error) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
				method, path, s.Boot.TestKey, contentType, len(body))
			conn.Write(body[:stallAt])
			time.Sleep(pause)
			conn.Write(body[stallAt:])
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp, b, err
		}

		wav := assettest.WAV(44100, 2, 3<<20) // 12 MiB, more than loopback buffers hold
		start := time.Now()
		resp, out, err := send(http.MethodPost, "/api/v1/assets", "audio/wav", wav, len(wav)/2)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("an upload pausing %v: %v %v", pause, resp, err)
		}
		t.Logf("upload of %d bytes with a %v pause: %v", len(wav), pause, time.Since(start).Round(time.Millisecond))
		var created struct {
			Data api.AssetView `json:"data"`
		}
		if err := json.Unmarshal(out, &created); err != nil || created.Data.ID == "" {
			t.Fatalf("upload answer %s: %v", out, err)
		}
		a := created.Data

		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/api/v1/assets/"+a.ID+"/content", nil)
		req.Header.Set("Authorization", "Bearer "+s.Boot.TestKey)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		dl, err := client.Do(req)
		if err != nil || dl.StatusCode != http.StatusOK {
			t.Fatalf("download: %v %v", dl, err)
		}
		head := make([]byte, 64<<10)
		if _, err := io.ReadFull(dl.Body, head); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
		n, err := io.Copy(io.Discard, dl.Body)
		dl.Body.Close()
		if err != nil || int64(len(head))+n != int64(len(wav)) {
			t.Fatalf("a download read slowly: %d of %d bytes, %v", int64(len(head))+n, len(wav), err)
		}

		body := []byte(`{"name":"stalled","scopes":["keys:read"]}`)
		resp, _, err = send(http.MethodPost, "/api/v1/api-keys", "application/json", body, 10)
		if err == nil && resp.StatusCode == http.StatusCreated {
			t.Fatal("a JSON request stalled past the read timeout was served")
		}
		t.Logf("a JSON body stalled past the read timeout: %v %v", resp != nil && resp.StatusCode != 0, err)
	})
}
