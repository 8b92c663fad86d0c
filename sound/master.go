package sound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
)

// Output is an operation's output materialized as an asset, once per
// operation and name, with the input asset it was derived from.
type Output struct {
	OperationID   string
	Name          string
	AssetID       string
	ParentAssetID string
	Format        string
	SampleRate    int
	BitDepth      int
	CreatedAt     time.Time
}

// OutputSpec is the requested output encoding.
type OutputSpec struct {
	Format     string `json:"format"`
	SampleRate int    `json:"sampleRate"`
	BitDepth   int    `json:"bitDepth"`
}

// MasterRequest is a validated mastering request.
type MasterRequest struct {
	InputAssetID string     `json:"inputAssetId"`
	Profile      string     `json:"profile"`
	TargetLUFS   *float64   `json:"targetLufs,omitempty"`
	Output       OutputSpec `json:"output"`
}

// MasterResult is what a mastering reports: the targets and the output as
// re-measured by the same meter.
type MasterResult struct {
	// Profile is the mastering profile applied.
	Profile string `json:"profile"`
	// TargetLUFS is the integrated loudness aimed at, in LUFS.
	TargetLUFS float64 `json:"targetLufs"`
	// CeilingDBTP is the true-peak ceiling, in dBTP.
	CeilingDBTP float64 `json:"ceilingDbtp"`
	// InputLUFS is the input's integrated loudness, in LUFS.
	InputLUFS float64 `json:"inputLufs"`
	// GainDB is the gain applied before limiting, in dB.
	GainDB float64 `json:"gainDb"`
	// AchievedLUFS is the output's integrated loudness as re-measured, in
	// LUFS.
	AchievedLUFS float64 `json:"achievedLufs"`
	// AchievedTruePeakDB is the output's true peak as re-measured, in dBTP.
	AchievedTruePeakDB float64 `json:"achievedTruePeakDbtp"`
}

// checkOutput validates an output spec against a capability snapshot:
// CAPABILITY_UNSUPPORTED (422) naming the field.
func checkOutput(op string, o OutputSpec, c Capabilities) error {
	unsupported := func(field string, v any, allowed any) error {
		return fault.E(op, fault.CapabilityUnsupported, fmt.Sprintf("output.%s %v is not supported.", field, v)).
			With("field", "output."+field).With("supported", allowed)
	}
	switch {
	case !slices.Contains(c.Audio.Formats, o.Format):
		return unsupported("format", o.Format, c.Audio.Formats)
	case !slices.Contains(c.Audio.SampleRates, o.SampleRate):
		return unsupported("sampleRate", o.SampleRate, c.Audio.SampleRates)
	case !slices.Contains(c.Audio.BitDepths, o.BitDepth):
		return unsupported("bitDepth", o.BitDepth, c.Audio.BitDepths)
	case o.Format == "flac" && o.BitDepth == 32:
		return unsupported("bitDepth", o.BitDepth, []int{16, 24})
	}
	return nil
}

// Master accepts a mastering of an asset of p's scope (a profile of the
// engine's, balanced by default for the built-in one: balanced, streaming,
// transparent or loud; targetLufs within the engine's range, [-30, -6] for
// the built-in one; the output within the capability snapshot).
func (s *Service) Master(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in MasterRequest) (Operation, error) {
	const op = "sound.Master"
	m := s.cfg.Engine.Mastering()
	if in.Profile == "" {
		in.Profile = m.DefaultProfile
	}
	if !slices.Contains(m.Profiles, in.Profile) {
		return Operation{}, fault.Invalid(op, "profile", "profile is balanced, streaming, transparent or loud.")
	}
	if t := in.TargetLUFS; t != nil && (*t < m.MinTargetLUFS || *t > m.MaxTargetLUFS) {
		return Operation{}, fault.E(op, fault.CapabilityUnsupported, fmt.Sprintf("targetLufs must be within [%g, %g].", m.MinTargetLUFS, m.MaxTargetLUFS)).
			With("field", "targetLufs")
	}
	caps := s.Capabilities(a)
	if err := checkOutput(op, in.Output, caps); err != nil {
		return Operation{}, err
	}
	return s.accept(ctx, st, p, a, caps, TypeMastering, in.InputAssetID, in)
}

// accept writes an operation of type t on an input asset of p's scope
// with its run and deadline jobs. An input whose header claims more than
// the snapshot's limits.maxInputDurationSeconds is INVALID_INPUT
// (details.field "input.assetId", details.reason "duration_limit",
// details.limit, details.claimedDurationSeconds).
func (s *Service) accept(ctx context.Context, st Store, p *access.Principal, a *access.Authority, caps Capabilities, t Type, input string, request any) (Operation, error) {
	const op = "sound.accept"
	if err := served(op, caps, t); err != nil {
		return Operation{}, err
	}
	if input == "" {
		return Operation{}, fault.Invalid(op, "input.assetId", "input.assetId is required.")
	}
	in, err := s.cfg.Assets.Get(ctx, st, assetScope(p.Scope()), input)
	if err != nil {
		if fault.Is(err, fault.NotFound) {
			return Operation{}, fault.E(op, fault.NotFound, "No such asset.").With("field", "input.assetId")
		}
		return Operation{}, fault.Wrap(op, err)
	}
	if limit := int64(caps.Limits.MaxInputDurationSeconds); in.DurationMs != nil && *in.DurationMs > limit*1000 {
		return Operation{}, durationError(op, limit).With("claimedDurationSeconds", float64(*in.DurationMs)/1000)
	}
	req, err := json.Marshal(request)
	if err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	cb, err := json.Marshal(caps)
	if err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	now := st.Now()
	o := Operation{ID: st.NewID(IDPrefix), Scope: p.Scope(), CreatedByUserID: p.UserID, CreatedByKeyID: p.KeyID, Type: t,
		Status: StatusQueued, Stage: StageAccepted, InputAssetID: input, Request: req, Capabilities: cb, Version: 1,
		DeadlineAt: now.Add(s.cfg.Deadline), CreatedAt: now, UpdatedAt: now, Plan: planOf(a)}
	if err := st.SoundOperationInsert(ctx, o); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if err := s.enqueue(ctx, st, o); err != nil {
		return Operation{}, err
	}
	return o, nil
}

// durationError is the refusal of an input longer than limit seconds.
func durationError(op string, limit int64) *fault.Error {
	return fault.E(op, fault.InvalidInput, fmt.Sprintf("The input is longer than the %d seconds one sound operation processes on this plan.", limit)).
		With("field", "input.assetId").With("reason", "duration_limit").With("limit", limit)
}

// runMaster masters the input into one output asset.
func (s *Service) runMaster(ctx context.Context, o Operation, in Input) error {
	var req MasterRequest
	if err := decodeRequest(o, &req); err != nil {
		return err
	}
	if _, err := s.cfg.Engine.Probe(ctx, in); err != nil {
		return err
	}
	if _, err := s.step(ctx, o.ID, StageMastering, 20); err != nil {
		return err
	}
	tmp, out, done, err := s.newOutput(req.Output)
	if err != nil {
		return err
	}
	defer done()
	opts := MasterOptions{Profile: req.Profile}
	if req.TargetLUFS != nil {
		opts.TargetLUFS = *req.TargetLUFS
	}
	rep, err := s.cfg.Engine.Master(ctx, in, opts, out)
	if err != nil {
		return err
	}
	if err := s.finishOutput(ctx, o.ID, tmp); err != nil {
		return err
	}
	res, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return s.persist(ctx, o, "master", tmp, req.Output, res, true)
}

// decodeRequest reads an operation's stored request into dst.
func decodeRequest(o Operation, dst any) error {
	if err := json.Unmarshal(o.Request, dst); err != nil {
		return fmt.Errorf("sound operation %s: request: %w", o.ID, err)
	}
	return nil
}

// finishOutput moves the operation to persisting and rewinds the encoded
// file for storing.
func (s *Service) finishOutput(ctx context.Context, id string, tmp *os.File) error {
	if _, err := s.step(ctx, id, StagePersisting, 90); err != nil {
		return err
	}
	_, err := tmp.Seek(0, io.SeekStart)
	return err
}

// persist stores body as the operation's output name (origin derived,
// parent the input, both in its provenance), once, in one unit of work; the last output also
// completes the operation with result. An operation that ended meanwhile
// gets no asset.
func (s *Service) persist(ctx context.Context, o Operation, name string, body io.Reader, spec OutputSpec, result json.RawMessage, last bool) error {
	mediaType := "audio/wav"
	if spec.Format == "flac" {
		mediaType = "audio/flac"
	}
	in := asset.UploadInput{Scope: assetScope(o.Scope), Creator: asset.Creator{UserID: o.CreatedByUserID, KeyID: o.CreatedByKeyID},
		Body: body, DeclaredType: mediaType, Filename: fmt.Sprintf("%s-%s.%s", o.ID, name, spec.Format), Origin: asset.Derived,
		Lineage: asset.Lineage{OperationID: o.ID, ParentIDs: []string{o.InputAssetID}}, Plan: o.Plan}
	_, err := s.cfg.Assets.Upload(ctx, s.cfg.ReadFunc(), in, func(ctx context.Context, insert func(asset.Store) (asset.Asset, error)) error {
		return s.cfg.Run(ctx, func(st Store) error {
			a, err := insert(st)
			if err != nil {
				return err
			}
			cur, err := st.SoundOperationLock(ctx, o.ID)
			if err != nil {
				return err
			}
			if cur.Status.Terminal() {
				return errStopped
			}
			ok, err := st.SoundOutputInsert(ctx, Output{OperationID: o.ID, Name: name, AssetID: a.ID, ParentAssetID: o.InputAssetID,
				Format: spec.Format, SampleRate: spec.SampleRate, BitDepth: spec.BitDepth, CreatedAt: st.Now()})
			if err != nil {
				return err
			}
			if !ok {
				// A retried run: this output was stored by an earlier
				// attempt. Roll this copy back and go on.
				return errStored
			}
			if !last {
				return nil
			}
			return s.complete(ctx, st, cur, result)
		})
	})
	switch {
	case errors.Is(err, errStopped):
		return errStopped
	case errors.Is(err, errStored) && last:
		return s.cfg.Run(ctx, func(st Store) error {
			cur, err := st.SoundOperationLock(ctx, o.ID)
			if err != nil {
				return err
			}
			return s.complete(ctx, st, cur, result)
		})
	case errors.Is(err, errStored):
		return nil
	}
	return err
}

// complete completes cur with result (a no-op on an ended operation).
func (s *Service) complete(ctx context.Context, st Store, cur Operation, result json.RawMessage) error {
	_, err := s.move(ctx, st, cur, EventComplete, func(o *Operation) {
		o.Stage, o.Progress, o.Result = StageFinished, 100, result
	})
	return err
}

// errStored rolls back an output a retried run stored again.
var errStored = errors.New("sound: output already stored")
