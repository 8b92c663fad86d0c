package sound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// EnhanceFeature is one requested enhancement: a feature name and its
// amount (0 means the feature's default, as the engine defines it).
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
	if err := s.cfg.Engine.CheckFeatures(in.Features); err != nil {
		var fe *FeatureError
		if !errors.As(err, &fe) {
			return Operation{}, fault.Wrap(op, err)
		}
		return Operation{}, fault.E(op, fault.CapabilityUnsupported, fe.Reason).With("field", fe.Field).
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

// runEnhance runs the features over the input into one output asset.
func (s *Service) runEnhance(ctx context.Context, o Operation, in Input) error {
	var req EnhanceRequest
	if err := decodeRequest(o, &req); err != nil {
		return err
	}
	if _, err := s.cfg.Engine.Probe(ctx, in); err != nil {
		return err
	}
	if _, err := s.step(ctx, o.ID, StageEnhancing, 20); err != nil {
		return err
	}
	tmp, out, done, err := s.newOutput(req.Output)
	if err != nil {
		return err
	}
	defer done()
	if err := s.cfg.Engine.Enhance(ctx, in, req.Features, out); err != nil {
		return err
	}
	if err := s.finishOutput(ctx, o.ID, tmp); err != nil {
		return err
	}
	result, err := json.Marshal(map[string]any{"features": req.Features})
	if err != nil {
		return err
	}
	return s.persist(ctx, o, "enhanced", tmp, req.Output, result, true)
}
