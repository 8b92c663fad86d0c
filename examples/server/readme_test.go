package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README runner executes the README's walk-through as a person would:
// every ```sh block, in order, in one bash shell, against one host started
// once with its defaults (every simulator on). The blocks that start the
// host or run the test suite (a line beginning "go run ./examples/server"
// or "go test") are the person's set-up, done here by the runner itself.
//
// The script keeps the README's line numbers (every other line is blank;
// the runner's prelude sits on line 1, the README's title), so a failure
// names the README line that failed. The runner changes only what a
// person's machine supplies: the host's address (127.0.0.1:8080 becomes the
// port it got), the working folder (a temporary one holding the host's
// data), and `go run ./examples/X`, which runs X built once for the run. A
// curl answering an error status fails the walk-through, unless the README
// line's comment names that error (`# 409 ...`), as the README's readers
// are told to expect it.

// expectedError matches a comment naming an error status.
const expectedError = `#\s*[45]\d\d\b`

// readmeScript turns the README into the runner's bash script: the
// runnable lines of its sh blocks at their own line numbers, with addr for
// 127.0.0.1:8080, and prelude on line 1. It reports how many blocks it
// kept and skipped.
func readmeScript(readme, prelude, addr string) (script string, kept, skipped int, err error) {
	lines := strings.Split(readme, "\n")
	out := make([]string, len(lines))
	inBlock, runnable := false, false
	start := 0
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inBlock && strings.HasPrefix(trimmed, "```"):
			inBlock, runnable, start = true, trimmed == "```sh", i+1
		case inBlock && trimmed == "```":
			inBlock = false
			if !runnable {
				continue
			}
			block := lines[start:i]
			if hostSetup(block) {
				skipped++
				continue
			}
			kept++
			for j, l := range shellLines(block) {
				out[start+j] = strings.ReplaceAll(l, "127.0.0.1:8080", addr)
			}
		}
	}
	if inBlock {
		return "", 0, 0, fmt.Errorf("a code block opened on line %d never closes", start)
	}
	if out[0] != "" || strings.HasPrefix(strings.TrimSpace(lines[0]), "```") {
		return "", 0, 0, fmt.Errorf("line 1 is inside a block; the prelude needs it")
	}
	out[0] = prelude
	return strings.Join(out, "\n") + "\n", kept, skipped, nil
}

// hostSetup reports whether a block starts the host or runs the suite.
func hostSetup(block []string) bool {
	for _, l := range block {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "go run ./examples/server") || strings.HasPrefix(l, "go test") {
			return true
		}
	}
	return false
}

// shellLines marks the curl commands whose comment names the error they
// answer: the command (which may continue over several lines) runs with
// EXPECT_ERROR=1, which lets the curl through.
func shellLines(block []string) []string {
	expected := regexp.MustCompile(expectedError)
	out := append([]string(nil), block...)
	for i := 0; i < len(out); i++ {
		first := i
		for i < len(out)-1 && strings.HasSuffix(strings.TrimRight(out[i], " "), `\`) {
			i++
		}
		if expected.MatchString(out[i]) && strings.HasPrefix(strings.TrimSpace(out[first]), "curl ") {
			out[first] = strings.Replace(out[first], "curl ", "EXPECT_ERROR=1 curl ", 1)
		}
	}
	return out
}

// runnerPrelude is line 1 of the script: strict mode, a trap that names
// the README line of a failed command, the working folder, `go run` of
// the prebuilt examples in bin, and curl failing on an error status unless
// the line expects one.
func runnerPrelude(work, bin string) string {
	return strings.Join([]string{
		"set -Eeuo pipefail",
		`trap 'echo "README line $LINENO${FUNCNAME:+ (in $FUNCNAME, called from README line ${BASH_LINENO[0]})} failed (status $?): $BASH_COMMAND" >&2' ERR`,
		"cd " + shellQuote(work),
		`go() { if [ "$1" != run ]; then echo "README runner: only go run is run: go $*" >&2; return 2; fi; shift; local p=$1; shift; ` +
			shellQuote(bin) + `/"${p##*/}" "$@"; }`,
		`curl() { if [ -n "${EXPECT_ERROR:-}" ]; then command curl "$@"; else command curl --fail-with-body "$@"; fi; }`,
	}, "; ")
}

// shellQuote single-quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestReadmeScript: the script keeps line numbers, runs only sh blocks,
// leaves the host's own set-up to the runner, points every URL at the
// host's address and lets through only the curls whose comment names
// their error.
func TestReadmeScript(t *testing.T) {
	readme := "# title\n\n```sh\ngo run ./examples/server\ngo test ./...\n```\n\n```go\nhttp.ListenAndServe()\n```\n\n" +
		"```sh\ncurl -s http://127.0.0.1:8080/a   # 409 until completed\ncurl -s -X POST \\\n  http://127.0.0.1:8080/b   # 503 live\n" +
		"curl -s http://127.0.0.1:8080/c   # 201, version 1\n```\n"
	script, kept, skipped, err := readmeScript(readme, "PRELUDE", "127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PRELUDE", "", "", "", "", "", "", "", "", "", "", "",
		"EXPECT_ERROR=1 curl -s http://127.0.0.1:9999/a   # 409 until completed",
		"EXPECT_ERROR=1 curl -s -X POST \\", "  http://127.0.0.1:9999/b   # 503 live",
		"curl -s http://127.0.0.1:9999/c   # 201, version 1", "", "", ""}
	if got := strings.Split(script, "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") || kept != 1 || skipped != 1 {
		t.Fatalf("script (kept %d, skipped %d):\n%s\nwant:\n%s", kept, skipped, script, strings.Join(want, "\n"))
	}
	if _, _, _, err := readmeScript("# t\n```sh\ncurl x\n", "P", "a"); err == nil {
		t.Fatal("an unclosed block was accepted")
	}
}

// TestReadme runs the README's walk-through against a host started once,
// and checks the outcomes the README promises: the download is the upload,
// two different MP3 takes, a generation followed over the realtime
// endpoint and resumed after its first event, a key's creation seen live,
// a verified mint, an activated subscription,
// both chain payments settled and matched, the guest's accepted
// submission shown as a contribution on its profile, a license sold,
// fulfilled and downloaded by its buyer, a challenge's reward paid to the
// guest's wallet from the reward treasury, whose key never leaks, and on
// the AI control plane a chat streamed, a chat served by the route's
// fallback, lyrics, a blueprint asked again once, a tool's draft applied
// on confirmation and a project analyzed by the no-retention model, and a
// generation's completion delivered to a local webhook endpoint, its
// signature verified.
func TestReadme(t *testing.T) {
	// The commands the walk-through needs, as the README's set-up section
	// lists them.
	for _, tool := range []string{"bash", "curl", "jq", "file", "cmp"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("PLATFORM_REQUIRE_README") == "1" {
				t.Fatalf("the README walk-through needs %s: %v", tool, err)
			}
			t.Skipf("the README walk-through needs %s (PLATFORM_REQUIRE_README=1 makes this a failure): %v", tool, err)
		}
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The walk-through waits on the cluster for several finalized payments.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	bin, work := t.TempDir(), t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(os.PathSeparator),
		"./examples/server", "./examples/soundmeter", "./examples/chainpay", "./examples/x402buy", "./examples/rewards",
		"./examples/webhookrecv", "./examples/wsfollow")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the examples: %v\n%s", err, out)
	}

	hostLog, err := os.Create(filepath.Join(work, "host.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer hostLog.Close()
	// A simulated music task moves a stage every 300ms instead of 3s, so
	// generating takes about two seconds.
	// Port 0: the host binds a port the kernel picks and names it in its
	// services map, so no other process can take it in between.
	host := exec.CommandContext(ctx, filepath.Join(bin, "server"), "-addr", "127.0.0.1:0", "-data", filepath.Join(work, "data"),
		"-provider-sim-advance", "300ms", "-webhook-allow-loopback")
	host.Dir, host.Stdout, host.Stderr = work, hostLog, hostLog
	host.Cancel = func() error { return host.Process.Signal(os.Interrupt) }
	host.WaitDelay = 20 * time.Second
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = host.Process.Signal(os.Interrupt)
		_ = host.Wait()
	}()
	waitForFile(t, ctx, filepath.Join(work, "data", servicesFile), func() string { return tail(filepath.Join(work, "host.log")) })
	var m serviceMap
	if b, err := os.ReadFile(filepath.Join(work, "data", servicesFile)); err != nil || json.Unmarshal(b, &m) != nil || !strings.HasPrefix(m.API, "http://") {
		t.Fatalf("services map: %s (%v)", b, err)
	}
	addr := strings.TrimPrefix(m.API, "http://")

	script, kept, skipped, err := readmeScript(string(raw), runnerPrelude(work, bin), addr)
	if err != nil {
		t.Fatal(err)
	}
	if kept < 10 || skipped != 3 {
		t.Fatalf("the README has %d runnable blocks and %d set-up blocks; the walk-through lost its sections", kept, skipped)
	}
	path := filepath.Join(work, "readme.sh")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sh := exec.CommandContext(ctx, "bash", path)
	sh.Dir, sh.Stdout, sh.Stderr = work, &out, &out
	start := time.Now()
	if err := sh.Run(); err != nil {
		t.Fatalf("the README walk-through failed after %s: %v\n--- output (tail) ---\n%s\n--- host log (tail) ---\n%s",
			time.Since(start).Round(time.Millisecond), err, lastLines(out.String(), 60), tail(filepath.Join(work, "host.log")))
	}
	t.Logf("README walk-through: %d blocks ran in %s", kept, time.Since(start).Round(time.Millisecond))
	got := out.String()
	for _, want := range []string{
		"the download is the upload", // assets
		"layer III",                  // file(1) on the generated tracks
		"two different takes",        // the simulators' takes differ
		`"LOCALNET_VERIFIED"`,        // the registry verified the mint
		`"status":"activated"`,       // the checkout's reconcile
		"Workspace credits after",    // chainpay settled
		`"outcome": "MATCH"`,         // the Solana Pay transfer reconciled
		"PAYMENT-RESPONSE success",   // x402buy settled its payment
		"grant x4g_",                 // and spent the grant on an analysis
		`"refundIssued":false`,       // the cancellation
		"FULFILLED",                  // the guest's marketplace order
		"Entitlement ent_",           // its license, issued once
		"Downloaded asset",           // the licensed track, downloaded by the buyer
		"event: delta",               // a streamed chat
		`"reason":"fallback:outage"`, // the AI route's fallback
		`{"status":"applied","result":{"type":"project"`,  // a tool's draft, confirmed
		`"title":"Neon Rain"`,                             // lyrics drafted
		"generation.operation.completed op_",              // a generation's completion, delivered signed to webhookrecv
		`"estimatedProductionDays":21},"attempts":2`,      // a blueprint, asked again once
		`"routing":{"reason":"primary","model":"private"`, // a project analyzed by the no-retention model
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk-through's output lacks %q", want)
		}
	}
	// The realtime section: a generation followed over /ws/v1 (its
	// history replayed), resumed after its first event, and a key's
	// creation seen live on the workspace channel.
	for _, want := range []string{"followed: generation.operation.accepted generation.operation.completed",
		"resumed: generation.operation.completed", "live: api_key.created key_"} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk-through's output lacks the realtime follow: %q", want)
		}
	}
	if n := strings.Count(got, "RECONCILED"); n < 2 {
		t.Errorf("%d intents reconciled, want both curl payments:\n%s", n, lastLines(got, 40))
	}
	// The projects section: the guest's remix, accepted into the demo
	// owner's public project, read by the guest's wallet, and counted on
	// the guest's profile.
	for _, want := range []string{`"projectTitle":"Night Drive video","type":"remix"`, `{"publicProjects":0,"contributions":1}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk-through's output lacks the guest's contribution: %q", want)
		}
	}
	// The rewards section: a pool funded only by reconciliation, a reward
	// paid to the guest's wallet exactly, the pool distributed, and the
	// same again all at once.
	for _, want := range []string{`"reason":"pool_not_funded"`, `{"fundingStatus":"FUNDED","funded":true,"evidence":{`,
		`{"status":"REWARDS_ALLOCATED","fundingStatus":"DISTRIBUTED"}`, `"reason":"not_claimable"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk-through's output lacks the reward's outcome: %q", want)
		}
	}
	if n := strings.Count(got, "+25, exactly the reward of 25."); n != 2 {
		t.Errorf("%d rewards paid to the guest's wallet, want the claim and the run all at once", n)
	}
	// The reward treasury's key: sealed in the data folder, and in no
	// clear form in any other file there, the host's log or the
	// walk-through's output (every response).
	data := filepath.Join(work, "data")
	master, err := os.ReadFile(filepath.Join(data, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	key := treasuryKey(t, data, master)
	hostOut, _ := os.ReadFile(filepath.Join(work, "host.log"))
	for name, b := range map[string][]byte{"the host's log": hostOut, "the walk-through's output": out.Bytes()} {
		if l := leaks(b, key); len(l) > 0 {
			t.Errorf("%s holds the reward treasury's key: %v", name, l)
		}
	}
	if err := filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(path) == rewardTreasuryFile {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if l := leaks(b, key); len(l) > 0 {
			t.Errorf("%s holds the reward treasury's key: %v", path, l)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		t.Logf("--- output (tail) ---\n%s", lastLines(got, 80))
	}
}

// waitForFile waits for path to exist: the host writes its services map
// once it listens.
func waitForFile(t *testing.T, ctx context.Context, path string, log func() string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the host never listened:\n%s", log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tail is the end of a file.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	return lastLines(string(b), 30)
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
