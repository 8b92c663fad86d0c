// Command assetbench measures asset upload and download through the HTTP API
// on loopback, and the process's peak resident memory while it streams.
//
// It starts the platform (SQLite and a blob directory in a temp dir, jobs
// disabled) on 127.0.0.1, bootstraps a workspace, then for each size in
// -sizes (MB) uploads a generated WAV of that size as a raw audio/wav body
// (24-bit stereo, generated as it is sent, never held in memory), and downloads it back to
// io.Discard. Before each transfer it resets the kernel's peak-RSS mark
// (Linux: /proc/self/clear_refs) so VmHWM is the peak of that transfer alone;
// client and server run in this one process, so the figure covers both.
// Streaming means the peak does not grow with the file's size.
//
//	go run ./examples/assetbench -sizes 10,100
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/store/sqlite"
)

func main() {
	sizes := flag.String("sizes", "10,100", "comma-separated upload sizes in MB (10^6 bytes)")
	flag.Parse()
	if err := run(*sizes); err != nil {
		fmt.Fprintln(os.Stderr, "assetbench:", err)
		os.Exit(1)
	}
}

func run(sizeList string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "platform-assetbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "platform.db")})
	if err != nil {
		return err
	}
	defer db.Close()
	mailer, err := filemail.New(filepath.Join(dir, "mail"), "no-reply@platform.localhost", nil)
	if err != nil {
		return err
	}
	p, err := platform.New(ctx, platform.Config{Store: db, SecretKey: []byte("assetbench-master-secret-0123456789abcdef"),
		BlobDir: filepath.Join(dir, "blobs"), MaxUploadBytes: 2 << 30, Jobs: platform.JobsConfig{Disabled: true}, Mailer: mailer})
	if err != nil {
		return err
	}
	defer p.Close()
	boot, err := p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "Bench", WorkspaceName: "Bench Studio",
		OwnerEmail: "bench@example.test", OwnerName: "Bench"})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	fmt.Printf("go %s %s/%s, %d CPUs; loopback, SQLite, fsblob in %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), os.TempDir())
	fmt.Printf("%8s  %14s  %14s  %16s  %16s  %12s\n", "size", "upload MB/s", "download MB/s", "peak RSS upload", "peak RSS download", "heap in use")
	for _, s := range strings.Split(sizeList, ",") {
		mb, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || mb <= 0 {
			return fmt.Errorf("bad size %q", s)
		}
		// 24-bit stereo: the generator's cheap pattern path, so the figure
		// measures the platform, not the sample synthesis.
		data := int64(mb)*1_000_000 - 44
		data -= data % 6
		total := 44 + data
		runtime.GC()
		resetPeak()
		start := time.Now()
		req, _ := http.NewRequest("POST", base+"/api/v1/assets", assettest.WAVReader(48000, 2, 24, data))
		req.ContentLength = total
		req.Header.Set("Content-Type", "audio/wav")
		req.Header.Set("Authorization", "Bearer "+boot.TestKey)
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		up := time.Since(start)
		if resp.StatusCode != 201 {
			return fmt.Errorf("upload: %d %s", resp.StatusCode, body)
		}
		peakUp := peakRSS()
		id := between(string(body), `"id":"`, `"`)

		runtime.GC()
		resetPeak()
		start = time.Now()
		req, _ = http.NewRequest("GET", base+"/api/v1/assets/"+id+"/content", nil)
		req.Header.Set("Authorization", "Bearer "+boot.TestKey)
		resp, err = client.Do(req)
		if err != nil {
			return fmt.Errorf("download: %w", err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		down := time.Since(start)
		if err != nil || resp.StatusCode != 200 || n != total {
			return fmt.Errorf("download: %d, %d bytes, %v", resp.StatusCode, n, err)
		}
		peakDown := peakRSS()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("%6dMB  %14.1f  %14.1f  %16s  %16s  %12s\n", mb,
			float64(n)/1e6/up.Seconds(), float64(n)/1e6/down.Seconds(), peakUp, peakDown, mib(int64(ms.HeapInuse)))
	}
	return nil
}

// resetPeak resets the kernel's peak-RSS mark of this process (Linux 4.0+).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS reads VmHWM, the peak resident set since the last reset.
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return "n/a"
			}
			return mib(kb << 10)
		}
	}
	return "n/a"
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// between returns the text of s between the first from and the next to.
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
