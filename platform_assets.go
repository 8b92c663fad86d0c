package platform

import (
	"errors"
	"fmt"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/plan"
)

// assetService builds the asset service on Config.Blobs, or on a filesystem
// blob store at Config.BlobDir. One of them is required: a route that exists
// must be able to store what it accepts. Storage quotas are the plan
// catalog's (plan.Limits.StorageQuotaBytes of the plan in effect).
func assetService(cfg Config, plans *plan.Service) (*asset.Service, error) {
	blobs := cfg.Blobs
	if blobs == nil {
		if cfg.BlobDir == "" {
			return nil, errors.New("platform: Config.BlobDir or Config.Blobs is required (where uploaded media is stored)")
		}
		fs, err := fsblob.New(cfg.BlobDir)
		if err != nil {
			return nil, fmt.Errorf("platform: Config.BlobDir: %w", err)
		}
		blobs = fs
	}
	svc, err := asset.New(asset.Config{Blobs: blobs, MaxUploadBytes: cfg.MaxUploadBytes, Logger: cfg.Logger,
		Quota: func(p string) int64 { return plans.Limits(p).StorageQuotaBytes }})
	if err != nil {
		return nil, fmt.Errorf("platform: assets: %w", err)
	}
	return svc, nil
}
