package asset_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/jobs"
)

// stagingBlobs is a blob store that stages uploads: it records what the
// cleanup asks of it. Its other methods are not called.
type stagingBlobs struct {
	asset.BlobStore
	ages    []time.Duration
	nows    []time.Time
	removed int
	err     error
}

func (b *stagingBlobs) Clean(age time.Duration, now time.Time) (int, error) {
	b.ages, b.nows = append(b.ages, age), append(b.nows, now)
	return b.removed, b.err
}

// TestCleanStagingRemovesDayOldFiles: the hourly cleanup, of the
// maintenance class, asks the blob store to remove staging files older
// than a day by the wall clock and logs how many it removed; a blob store
// that stages nothing has nothing to clean.
func TestCleanStagingRemovesDayOldFiles(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	blobs := &stagingBlobs{removed: 3}
	svc, err := asset.New(asset.Config{Blobs: blobs, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ks := svc.Jobs()
	if len(ks) != 1 || ks[0].Name != "assets.clean_staging" || ks[0].Class != jobs.ClassMaintenance || ks[0].Every != time.Hour {
		t.Fatalf("kinds %+v", ks)
	}
	before := time.Now()
	if err := ks[0].HandlerFunc(ctx, jobs.Job{Kind: asset.JobCleanStaging}); err != nil {
		t.Fatal(err)
	}
	if len(blobs.ages) != 1 || blobs.ages[0] != 24*time.Hour || blobs.nows[0].Before(before) || blobs.nows[0].After(time.Now()) {
		t.Fatalf("Clean(%v, %v), want a day at the wall clock's now", blobs.ages, blobs.nows)
	}
	if !strings.Contains(logs.String(), "removed stale upload staging files") || !strings.Contains(logs.String(), "count=3") {
		t.Fatalf("log %q", logs.String())
	}
	blobs.err = errors.New("disk gone")
	if err := ks[0].HandlerFunc(ctx, jobs.Job{Kind: asset.JobCleanStaging}); !errors.Is(err, blobs.err) {
		t.Fatalf("failing cleanup: %v", err)
	}

	plain, err := asset.New(asset.Config{Blobs: struct{ asset.BlobStore }{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Jobs()[0].HandlerFunc(ctx, jobs.Job{Kind: asset.JobCleanStaging}); err != nil {
		t.Fatalf("a blob store without staging: %v", err)
	}
}
