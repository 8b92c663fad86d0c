package sound

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// StemsRequest is a validated stem separation request.
type StemsRequest struct {
	InputAssetID string     `json:"inputAssetId"`
	Stems        []string   `json:"stems"`
	Output       OutputSpec `json:"output"`
}

// Stems accepts a stem separation of an asset of p's scope: stems names
// some of vocals, drums, bass and other (empty means all four); a name
// the engine does not serve is CAPABILITY_UNSUPPORTED (details.field
// "stems[i]"), as is an output outside the capability snapshot.
func (s *Service) Stems(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in StemsRequest) (Operation, error) {
	const op = "sound.Stems"
	if len(in.Stems) == 0 {
		in.Stems = s.stems()
	}
	caps := s.Capabilities(a)
	if len(in.Stems) > caps.Features.StemSeparation.MaximumStems {
		return Operation{}, fault.E(op, fault.CapabilityUnsupported, "Too many stems.").With("field", "stems").
			With("maximum", caps.Features.StemSeparation.MaximumStems)
	}
	for i, name := range in.Stems {
		field := fmt.Sprintf("stems[%d]", i)
		if !slices.Contains(s.stems(), name) {
			return Operation{}, fault.E(op, fault.CapabilityUnsupported, fmt.Sprintf("The stem %q is not served.", name)).
				With("field", field).With("supported", s.stems())
		}
		if slices.Index(in.Stems, name) != i {
			return Operation{}, fault.Invalid(op, field, fmt.Sprintf("The stem %q is requested twice.", name))
		}
	}
	if err := checkOutput(op, in.Output, caps); err != nil {
		return Operation{}, err
	}
	return s.accept(ctx, st, p, a, caps, TypeStemSeparation, in.InputAssetID, in)
}

// runStems separates the input into one output asset per requested stem.
func (s *Service) runStems(ctx context.Context, o Operation, in Input) error {
	var req StemsRequest
	if err := decodeRequest(o, &req); err != nil {
		return err
	}
	if _, err := s.cfg.Engine.Probe(ctx, in); err != nil {
		return err
	}
	if _, err := s.step(ctx, o.ID, StageStemIsolation, 20); err != nil {
		return err
	}
	// Each stem is encoded to its own temporary file while the separation
	// streams, then stored.
	files := map[string]*os.File{}
	outs := map[string]Sink{}
	for _, name := range req.Stems {
		tmp, out, done, err := s.newOutput(req.Output)
		if err != nil {
			return err
		}
		defer done()
		files[name], outs[name] = tmp, out
	}
	if err := s.cfg.Engine.Separate(ctx, in, req.Stems, outs); err != nil {
		return err
	}
	if _, err := s.step(ctx, o.ID, StageEncoding, 80); err != nil {
		return err
	}
	if _, err := s.step(ctx, o.ID, StagePersisting, 90); err != nil {
		return err
	}
	result, err := json.Marshal(map[string]any{"stems": req.Stems})
	if err != nil {
		return err
	}
	for i, name := range req.Stems {
		tmp := files[name]
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := s.persist(ctx, o, name, tmp, req.Output, result, i == len(req.Stems)-1); err != nil {
			return err
		}
	}
	return nil
}
