package sound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/sound/dsp"
)

// EnhanceFeature is one requested enhancement: a feature name and its
// amount (0 means the feature's default; see dsp.Feature).
type EnhanceFeature struct {
	Name   string  `json:"name"`
	Amount float64 `json:"amount,omitempty"`
}

// EnhanceRequest is a validated enhancement request.
type EnhanceRequest struct {
	InputAssetID string           `json:"inputAssetId"`
	Features     []EnhanceFeature `json:"features"`
	Output       OutputSpec       `json:"output"`
}

func dspFeatures(fs []EnhanceFeature) []dsp.Feature {
	out := make([]dsp.Feature, len(fs))
	for i, f := range fs {
		out[i] = dsp.Feature{Name: f.Name, Amount: f.Amount}
	}
	return out
}

// Enhance accepts an enhancement of an asset of p's scope. Features are
// denoise, declick, dehum, clarity, stereo_width and voice_cleanup, each at
// most once; an unknown, repeated or out-of-range feature is rejected with
// CAPABILITY_UNSUPPORTED (422, details.field "features[i].name" or
// "features[i].amount"), never ignored; so is an output outside the
// capability snapshot.
func (s *Service) Enhance(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in EnhanceRequest) (Operation, error) {
	const op = "sound.Enhance"
	if len(in.Features) == 0 {
		return Operation{}, fault.E(op, fault.CapabilityUnsupported, "Name at least one feature.").With("field", "features")
	}
	// The engine validates the features before it reads anything.
	probe := dsp.NewBlockReader(dsp.Format{SampleRate: 48000, Channels: 2}, dsp.NewBlock(2, 0))
	if _, err := s.cfg.Engine.Enhance(probe, dspFeatures(in.Features)); err != nil {
		var oe *dsp.OptionError
		if !errors.As(err, &oe) {
			return Operation{}, fault.Wrap(op, err)
		}
		return Operation{}, fault.E(op, fault.CapabilityUnsupported, oe.Reason).With("field", s.featureField(oe, in.Features)).
			With("supported", s.features())
	}
	caps := s.Capabilities(a)
	for i, f := range in.Features {
		if on, known := caps.Features.Enhancement.Features[f.Name]; known && !on {
			return Operation{}, fault.E(op, fault.CapabilityUnsupported, fmt.Sprintf("This deployment does not serve %s.", f.Name)).
				With("field", fmt.Sprintf("features[%d].name", i))
		}
	}
	if err := checkOutput(op, in.Output, caps); err != nil {
		return Operation{}, err
	}
	return s.accept(ctx, st, p, a, caps, TypeEnhancement, in.InputAssetID, in)
}

// featureField names the request field an engine option error points at:
// features[i].name for an unknown or repeated name, else the amount of the
// feature the engine refuses on its own.
func (s *Service) featureField(oe *dsp.OptionError, fs []EnhanceFeature) string {
	var i int
	if _, err := fmt.Sscanf(oe.Field, "Feature[%d].Name", &i); err == nil {
		return fmt.Sprintf("features[%d].name", i)
	}
	probe := dsp.NewBlockReader(dsp.Format{SampleRate: 48000, Channels: 2}, dsp.NewBlock(2, 0))
	for i, f := range fs {
		if _, err := s.cfg.Engine.Enhance(probe, dspFeatures([]EnhanceFeature{f})); err != nil {
			return fmt.Sprintf("features[%d].amount", i)
		}
	}
	return "features"
}

// runEnhance runs the features over the input into one output asset.
func (s *Service) runEnhance(ctx context.Context, o Operation, blob asset.Blob) error {
	var req EnhanceRequest
	if err := decodeRequest(o, &req); err != nil {
		return err
	}
	src, err := s.openInput(ctx, o, blob)
	if err != nil {
		return err
	}
	r, err := s.cfg.Engine.Enhance(dsp.NewResampler(src, req.Output.SampleRate), dspFeatures(req.Features))
	if err != nil {
		return err
	}
	if _, err := s.step(ctx, o.ID, StageEnhancing, 20); err != nil {
		return err
	}
	channels := r.Format().Channels
	tmp, enc, done, err := s.newOutput(req.Output, channels)
	if err != nil {
		return err
	}
	defer done()
	buf := dsp.NewBlock(channels, dsp.BlockFrames)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if werr := enc.Write(buf.Slice(n)); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := s.finishOutput(ctx, o.ID, enc, tmp); err != nil {
		return err
	}
	result, err := json.Marshal(map[string]any{"features": req.Features})
	if err != nil {
		return err
	}
	return s.persist(ctx, o, "enhanced", tmp, req.Output, result, true)
}
