package asset

import (
	"context"
	"time"
)

// Basis says how a provenance record came to be.
type Basis string

const (
	// BasisCreation records were written in the unit of work that made
	// the asset, from what that unit knew.
	BasisCreation Basis = "creation"
	// BasisBackfill records were rebuilt, by the migration that added
	// provenance, from the rows an asset made before it had left: what
	// those rows do not say is left unknown, never guessed.
	BasisBackfill Basis = "backfill"
)

// Bases returns every basis, in declaration order.
func Bases() []Basis { return []Basis{BasisCreation, BasisBackfill} }

// Parent is an asset another asset's bytes were computed from, with the
// content hash it had: a source hash of the child.
type Parent struct {
	// AssetID is the parent asset's id.
	AssetID string
	// SHA256 is the parent's content hash (lower-case hex); "" when
	// unknown (a backfilled record whose parent row is gone).
	SHA256 string
}

// Lineage is what the maker of an asset knows of where its bytes came
// from beyond their origin and creator (UploadInput.Lineage): it becomes
// the asset's Provenance. The zero value fits an upload.
type Lineage struct {
	// Provider and Model name, for generated audio, the provider route that
	// delivered the bytes and the platform model id the generation asked
	// for.
	Provider string
	Model    string
	// OperationID is the generation or sound operation that made the
	// asset.
	OperationID string
	// ParentIDs are the assets of the same scope the bytes were computed
	// from (a sound operation's input), in order. Upload reads each one's
	// content hash in its unit of work; a parent it cannot read fails it.
	ParentIDs []string
}

// Provenance is where an asset's bytes came from (spec, Rights and
// marketplace: origin, creator, provider and model, parents, source and
// output hashes). One record per asset, written with the asset in one
// unit of work (Service.Upload) and never changed; assets made before
// provenance existed got a BasisBackfill record. Empty strings are facts
// the record does not know.
type Provenance struct {
	// AssetID is the asset the record describes.
	AssetID string
	// Scope is the asset's.
	Scope Scope
	// Origin is how the bytes came to be (the asset's Origin).
	Origin Origin
	// CreatorUserID is the user who made the asset, or on whose behalf an
	// API key or operation did; "" when unknown.
	CreatorUserID string
	// Provider, Model and OperationID are the Lineage's.
	Provider    string
	Model       string
	OperationID string
	// Parents are the assets the bytes were computed from, in order, with
	// their content hashes.
	Parents []Parent
	// OutputSHA256 is the asset's own content hash (lower-case hex).
	OutputSHA256 string
	// Basis says whether the record was written at creation or backfilled.
	Basis Basis
	// RecordedAt is when a BasisCreation record was written (the asset's
	// creation); zero for a backfilled one.
	RecordedAt time.Time
}

// ProvenanceWriter stores provenance records. Store embeds it; it is the
// one method Upload adds to an asset's unit of work.
type ProvenanceWriter interface {
	// AssetProvenanceInsert stores p, the provenance of an asset inserted
	// in the same unit of work. CONFLICT when the asset has one.
	AssetProvenanceInsert(ctx context.Context, p Provenance) error
}

// provenance builds the record of a, made from in, reading its parents'
// hashes through st.
func provenance(ctx context.Context, st Store, a Asset, in Lineage) (Provenance, error) {
	p := Provenance{AssetID: a.ID, Scope: a.Scope, Origin: a.Origin, CreatorUserID: a.CreatedBy.UserID, Provider: in.Provider,
		Model: in.Model, OperationID: in.OperationID, OutputSHA256: a.SHA256, Basis: BasisCreation, RecordedAt: a.CreatedAt}
	for _, id := range in.ParentIDs {
		parent, err := st.AssetGet(ctx, a.Scope, id)
		if err != nil {
			return Provenance{}, err
		}
		p.Parents = append(p.Parents, Parent{AssetID: parent.ID, SHA256: parent.SHA256})
	}
	return p, nil
}
