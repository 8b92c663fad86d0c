package platform

import (
	"errors"
	"fmt"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/fsblob"
)

// assetService builds the asset service on Config.Blobs, or on a filesystem
// blob store at Config.BlobDir. One of them is required: a route that exists
// must be able to store what it accepts.
func assetService(cfg Config) (*asset.Service, error) {
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
	svc, err := asset.New(asset.Config{Blobs: blobs, MaxUploadBytes: cfg.MaxUploadBytes})
	if err != nil {
		return nil, fmt.Errorf("platform: assets: %w", err)
	}
	return svc, nil
}
