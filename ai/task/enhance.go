package task

import (
	"context"
	"slices"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// Target is what an enhanced prompt is for.
type Target string

// The targets.
const (
	// TargetMusic: a music generation (the default).
	TargetMusic Target = "music"
	// TargetLyrics: a lyrics draft.
	TargetLyrics Target = "lyrics"
	// TargetVisual: an image or video for a project (cover art, a scene).
	TargetVisual Target = "visual"
)

// Targets lists the targets.
func Targets() []Target { return []Target{TargetMusic, TargetLyrics, TargetVisual} }

// Bounds of an enhanced prompt.
const (
	// MaxNegativePrompt bounds what a prompt asks to avoid.
	MaxNegativePrompt = 500
	// MaxTags bounds an enhanced prompt's tags; MaxTag each one.
	MaxTags = 12
	MaxTag  = 40
)

// EnhanceRequest asks for a better prompt (task prompt_enhance).
type EnhanceRequest struct {
	// Prompt is the creator's prompt. Required, at most MaxPrompt
	// characters.
	Prompt string
	// Target is what the prompt is for; empty means TargetMusic.
	Target Target
}

// Validate returns r normalized (Target defaulted), or INVALID_INPUT
// naming the field.
func (r EnhanceRequest) Validate() (EnhanceRequest, error) {
	const op = "task.EnhancePrompt"
	var err error
	if r.Prompt, err = text(op, "prompt", r.Prompt, true, MaxPrompt); err != nil {
		return r, err
	}
	if r.Target == "" {
		r.Target = TargetMusic
	}
	if !slices.Contains(Targets(), r.Target) {
		return r, fault.Invalid(op, "target", "target is one of music, lyrics, visual.")
	}
	return r, nil
}

// EnhancedPrompt is an improved prompt.
type EnhancedPrompt struct {
	// Prompt is the improved prompt, ready for the target's generator.
	Prompt string `json:"prompt"`
	// NegativePrompt is what the generation should avoid; may be empty.
	NegativePrompt string `json:"negativePrompt"`
	// Tags are short descriptors (genre, instruments, style), distinct.
	Tags []string `json:"tags"`
	// Rationale says what was changed and why.
	Rationale string `json:"rationale"`
}

func enhanceSchema() *schema {
	return object("An improved generation prompt.",
		prop{"prompt", str("The improved prompt, ready for the generator.", 1, MaxPrompt)},
		prop{"negativePrompt", str("What the generation should avoid; empty when nothing.", 0, MaxNegativePrompt)},
		prop{"tags", array("Short descriptors such as genre, instruments or style, each once.", str("A tag.", 1, MaxTag), 0, MaxTags)},
		prop{"rationale", str("What was changed and why, briefly.", 1, 500)},
	)
}

// EnhancePrompt improves r's prompt on c. Errors as MusicBrief.
func (s *Service) EnhancePrompt(ctx context.Context, c Completer, r EnhanceRequest) (Result[EnhancedPrompt], error) {
	const op = "task.EnhancePrompt"
	r, err := r.Validate()
	if err != nil {
		return Result[EnhancedPrompt]{}, err
	}
	in := struct {
		Prompt string `json:"prompt"`
		Target Target `json:"target"`
	}{r.Prompt, r.Target}
	msg, err := userMessage(block{"task_input", in})
	if err != nil {
		return Result[EnhancedPrompt]{}, fault.Wrap(op, err)
	}
	sp := s.spec(ai.TaskPromptEnhance, op, "Rewrite task_input.prompt into a clearer, more specific prompt for the generator "+
		"task_input.target names (music: a music generation model; lyrics: a lyrics writer; visual: an image or video model). "+
		"Keep the creator's intent; add concrete detail (style, instrumentation or visuals, mood, structure); do not add "+
		"names of real artists or copyrighted works.", 1024)
	return run(ctx, c, sp, msg, func(e *EnhancedPrompt) []string {
		return unique("/tags/%d", e.Tags)
	})
}
