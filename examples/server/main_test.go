package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowHeaderClientIsDisconnected: the host set no read, write or
// idle timeouts beside the header one, and a client that trickles its
// headers must not hold a connection. With short timeouts, a client that
// never finishes its headers is disconnected by the server.
func TestSlowHeaderClientIsDisconnected(t *testing.T) {
	d := defaultTimeouts()
	srv := newServer("127.0.0.1:0", http.NotFoundHandler(), d)
	if srv.ReadHeaderTimeout != d.readHeader || srv.ReadTimeout == 0 || srv.WriteTimeout == 0 || srv.IdleTimeout == 0 {
		t.Fatalf("server timeouts %v %v %v %v: want all four set", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}

	srv = newServer("127.0.0.1:0", http.NotFoundHandler(), timeouts{readHeader: 200 * time.Millisecond, read: time.Second,
		write: time.Second, idle: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: example\r\nX-Slow: ") // the headers never end
	// A guard, so the test fails rather than hangs if the server keeps
	// the connection.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept a connection whose headers never ended")
	}
	t.Logf("disconnected after %v (ReadHeaderTimeout 200ms)", time.Since(start).Round(time.Millisecond))
}

// TestListeningIsLoggedOnlyAfterTheBind: a host whose address is taken
// fails with the bind's error and never claims to listen; on a free
// address it logs the address it really bound.
func TestListeningIsLoggedOnlyAfterTheBind(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	srv := newServer(taken.Addr().String(), http.NotFoundHandler(), defaultTimeouts())
	if _, _, err := listenAndServe(srv, taken.Addr().String(), log); err == nil {
		t.Fatal("a taken address was bound")
	}
	if strings.Contains(out.String(), "listening") {
		t.Fatalf("the host claimed to listen on a taken address: %s", out.String())
	}

	srv = newServer("127.0.0.1:0", http.NotFoundHandler(), defaultTimeouts())
	errc, base, err := listenAndServe(srv, "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, ":0") {
		t.Fatalf("base = %q, want the bound address", base)
	}
	defer srv.Close()
	line := out.String()
	if !strings.Contains(line, "listening") || strings.Contains(line, ":0/") || !strings.Contains(line, "/api/docs/openapi.json") {
		t.Fatalf("log = %q, want the bound address and the document's URL", line)
	}
	select {
	case err := <-errc:
		t.Fatalf("serve ended: %v", err)
	default:
	}
}
