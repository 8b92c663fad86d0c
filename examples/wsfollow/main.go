// Command wsfollow follows one channel of the platform's realtime endpoint
// (GET /ws/v1) and prints every message it receives, one JSON object per
// line. It authenticates with the API key in $PLATFORM_API_KEY (sent as
// Authorization: Bearer, never in the URL), subscribes to -channel (from
// -after, an event id, when set) and, when the connection drops for a
// reason a reconnect can mend (the host stopping, a slow read, the
// network), reconnects and resumes after the last event it printed, so no
// event is missed or printed twice.
//
//	PLATFORM_API_KEY=$KEY go run ./examples/wsfollow -server http://127.0.0.1:8080 \
//	    -channel operation:$OP -until generation.operation.completed,generation.operation.failed
//
// It exits 0 after printing an event whose type -until lists, 1 on a
// failure or when -timeout passes, and 2 when the server refuses the
// subscription or the credential (its error message is printed first).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/creatormusic/platform/realtime"
)

// KeyEnv names the environment variable holding the API key.
const KeyEnv = "PLATFORM_API_KEY"

func main() {
	err := run(context.Background(), os.Args[1:], os.Getenv(KeyEnv), os.Stdout)
	var r refused
	switch {
	case errors.As(err, &r):
		fmt.Fprintln(os.Stderr, "wsfollow:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "wsfollow:", err)
		os.Exit(1)
	}
}

// refused is a refusal by the server: of the subscription, or of the
// credential.
type refused struct{ msg string }

func (r refused) Error() string { return r.msg }

// errDone ends the follow after an event -until lists.
var errDone = errors.New("done")

// follow is one run's settings and state.
type follow struct {
	endpoint string
	key      string
	channel  string
	until    []string
	out      io.Writer
	// last is the id of the last event printed: a reconnect resumes after it.
	last string
}

func run(ctx context.Context, args []string, key string, out io.Writer) error {
	fs := flag.NewFlagSet("wsfollow", flag.ContinueOnError)
	server := fs.String("server", "http://127.0.0.1:8080", "the host's base `URL` (http or https; the endpoint is /ws/v1 under it)")
	channel := fs.String("channel", "workspace", "the `channel`: operation:<id>, intent:<id>, order:<id> or workspace")
	after := fs.String("after", "", "resume after this event `id` (the last one seen)")
	until := fs.String("until", "", "comma-separated event `types`: exit after printing one of them")
	timeout := fs.Duration("timeout", 0, "give up after this long (0: follow until -until or interrupted)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("set %s to an API key", KeyEnv)
	}
	u, err := url.Parse(*server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-server %q is not an http(s) base URL", *server)
	}
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path = strings.TrimSuffix(u.Path, "/") + "/ws/v1"
	f := &follow{endpoint: u.String(), key: key, channel: *channel, out: out, last: *after}
	if *until != "" {
		f.until = strings.Split(*until, ",")
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		err := f.once(ctx)
		switch {
		case errors.Is(err, errDone):
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("gave up: %w", ctx.Err())
		case !resumable(err):
			return err
		}
		fmt.Fprintf(os.Stderr, "wsfollow: %v; resuming after %s\n", err, orStart(f.last))
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up: %w", ctx.Err())
		case <-time.After(min(time.Duration(attempt+1)*200*time.Millisecond, 5*time.Second)):
		}
	}
}

func orStart(id string) string {
	if id == "" {
		return "the start"
	}
	return id
}

// resumable reports whether a reconnect can mend the connection's end:
// the host stopping, the client reading too slowly, a dead or broken
// connection; not a refused credential or subscription.
func resumable(err error) bool {
	var r refused
	if errors.As(err, &r) {
		return false
	}
	switch websocket.CloseStatus(err) {
	case realtime.CloseUnauthenticated, realtime.CloseAccessDenied, websocket.StatusNormalClosure, websocket.StatusUnsupportedData,
		websocket.StatusMessageTooBig:
		return false
	}
	return true
}

// once connects, subscribes and prints messages until the connection ends
// or an -until event arrives (errDone).
func (f *follow) once(ctx context.Context) error {
	ws, resp, err := websocket.Dial(ctx, f.endpoint, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + f.key}}})
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			b, _ := io.ReadAll(resp.Body)
			return refused{fmt.Sprintf("the handshake was refused: %d %s", resp.StatusCode, strings.TrimSpace(string(b)))}
		}
		return fmt.Errorf("connect: %w", err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(4 << 20)
	sub, _ := json.Marshal(realtime.ClientMessage{Type: realtime.TypeSubscribe, Channel: f.channel, After: f.last})
	if err := ws.Write(ctx, websocket.MessageText, sub); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			if st := websocket.CloseStatus(err); st != -1 {
				var ce websocket.CloseError
				errors.As(err, &ce)
				if st == realtime.CloseUnauthenticated || st == realtime.CloseAccessDenied {
					return refused{fmt.Sprintf("the server closed the connection: %d %s", st, ce.Reason)}
				}
				return fmt.Errorf("the server closed the connection: %d %s: %w", st, ce.Reason, err)
			}
			return err
		}
		var m realtime.ServerMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("a message that is not JSON: %w", err)
		}
		fmt.Fprintln(f.out, string(b))
		switch m.Type {
		case realtime.TypeEvent:
			f.last = m.ID
			if m.Event != nil && slices.Contains(f.until, m.Event.Type) {
				ws.Close(websocket.StatusNormalClosure, "")
				return errDone
			}
		case realtime.TypeError:
			if m.Channel == f.channel && m.Error != nil {
				return refused{fmt.Sprintf("%s: %s %s", f.channel, m.Error.Code, m.Error.Message)}
			}
		}
	}
}
