package asset

import (
	"context"
	"fmt"
	"time"

	"github.com/creatormusic/platform/jobs"
)

// JobCleanStaging removes the staging files that crashed uploads left in
// the blob store, once every CleanStagingEvery. Rows in existing
// databases carry the name, so it never changes.
const JobCleanStaging = "assets.clean_staging"

// The staging cleanup's period and age.
const (
	// CleanStagingEvery is the cleanup's period.
	CleanStagingEvery = time.Hour
	// StagingAge is how old a staging file must be before the cleanup
	// removes it: far longer than any upload takes.
	StagingAge = 24 * time.Hour
)

// StagingCleaner is a blob store that stages uploads in files
// (asset/fsblob.Store): Clean removes the staging files older than age at
// now and reports how many it removed.
type StagingCleaner interface {
	Clean(age time.Duration, now time.Time) (int, error)
}

// Jobs returns the asset domain's job kind: the periodic staging
// cleanup, of the maintenance class. A blob store that is not a
// StagingCleaner has nothing to clean, and its runs do nothing.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{{Name: JobCleanStaging, Class: jobs.ClassMaintenance, Every: CleanStagingEvery, HandlerFunc: s.cleanStaging}}
}

// cleanStaging removes the staging files crashed uploads left. File ages
// are wall-clock facts of the filesystem, so they are compared with the
// wall clock, not the platform's clock.
func (s *Service) cleanStaging(context.Context, jobs.Job) error {
	c, ok := s.blobs.(StagingCleaner)
	if !ok {
		return nil
	}
	n, err := c.Clean(StagingAge, time.Now())
	if err != nil {
		return fmt.Errorf("clean upload staging: %w", err)
	}
	if n > 0 {
		s.log.Info("removed stale upload staging files", "count", n)
	}
	return nil
}
