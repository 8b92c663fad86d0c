package task

import (
	"context"
	"fmt"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// Section is a part of a song's structure.
type Section string

// The sections.
const (
	SectionIntro      Section = "intro"       // opens the song
	SectionVerse      Section = "verse"       // tells the story
	SectionPreChorus  Section = "pre_chorus"  // builds toward the chorus
	SectionChorus     Section = "chorus"      // the repeated center
	SectionPostChorus Section = "post_chorus" // follows a chorus
	SectionBridge     Section = "bridge"      // a contrasting passage
	SectionHook       Section = "hook"        // a short repeated phrase
	SectionOutro      Section = "outro"       // closes the song
)

// Sections lists the sections.
func Sections() []Section {
	return []Section{SectionIntro, SectionVerse, SectionPreChorus, SectionChorus, SectionPostChorus, SectionBridge, SectionHook, SectionOutro}
}

// Vocals is the voice a brief asks for.
type Vocals string

// The vocals.
const (
	VocalsNone   Vocals = "none"   // instrumental
	VocalsFemale Vocals = "female" // a female lead
	VocalsMale   Vocals = "male"   // a male lead
	VocalsDuet   Vocals = "duet"   // two leads
	VocalsChoir  Vocals = "choir"  // a group
)

// VocalsValues lists the vocals.
func VocalsValues() []Vocals {
	return []Vocals{VocalsNone, VocalsFemale, VocalsMale, VocalsDuet, VocalsChoir}
}

// Bounds of a music brief.
const (
	// MinDurationSeconds and MaxDurationSeconds bound a track's length.
	MinDurationSeconds = 15
	MaxDurationSeconds = 600
	// MinTempo and MaxTempo bound a tempo, in beats per minute.
	MinTempo = 40
	MaxTempo = 240
	// MaxInstruments bounds a brief's instruments; MaxStructure its
	// sections.
	MaxInstruments = 12
	MaxStructure   = 16
	// MaxTitle bounds every title an answer holds.
	MaxTitle = 120
)

// BriefRequest asks for a music brief (task music_brief).
type BriefRequest struct {
	// Prompt is the creator's idea. Required, at most MaxPrompt
	// characters.
	Prompt string
	// Genre and Mood are optional hints, at most MaxHint characters.
	Genre string
	Mood  string
	// Instrumental asks for a track without vocals.
	Instrumental bool
	// DurationSeconds, when not zero, is the track's length
	// (MinDurationSeconds to MaxDurationSeconds); zero lets the model
	// choose.
	DurationSeconds int
}

// Validate returns r normalized (text trimmed), or INVALID_INPUT naming
// the field.
func (r BriefRequest) Validate() (BriefRequest, error) {
	const op = "task.MusicBrief"
	var err error
	if r.Prompt, err = text(op, "prompt", r.Prompt, true, MaxPrompt); err != nil {
		return r, err
	}
	if r.Genre, err = text(op, "genre", r.Genre, false, MaxHint); err != nil {
		return r, err
	}
	if r.Mood, err = text(op, "mood", r.Mood, false, MaxHint); err != nil {
		return r, err
	}
	if r.DurationSeconds != 0 && (r.DurationSeconds < MinDurationSeconds || r.DurationSeconds > MaxDurationSeconds) {
		return r, fault.Invalid(op, "durationSeconds", fmt.Sprintf("durationSeconds must be %d to %d, or omitted.",
			MinDurationSeconds, MaxDurationSeconds)).With("limit", MaxDurationSeconds)
	}
	return r, nil
}

// Brief is a structured music brief: what a generation needs to know.
type Brief struct {
	// Title is a working title.
	Title string `json:"title"`
	// Genre and Mood describe the track.
	Genre string `json:"genre"`
	Mood  string `json:"mood"`
	// TempoBPM is the tempo, MinTempo to MaxTempo.
	TempoBPM int `json:"tempoBpm"`
	// Key is the musical key ("A minor").
	Key string `json:"key"`
	// Vocals is the voice; VocalsNone for an instrumental.
	Vocals Vocals `json:"vocals"`
	// Instruments are the featured instruments, distinct.
	Instruments []string `json:"instruments"`
	// Structure is the song's sections in order.
	Structure []Section `json:"structure"`
	// DurationSeconds is the track's length.
	DurationSeconds int `json:"durationSeconds"`
	// Description is the brief in prose.
	Description string `json:"description"`
	// GenerationPrompt is a prompt ready for a music generation.
	GenerationPrompt string `json:"generationPrompt"`
}

func briefSchema() *schema {
	return object("A music brief.",
		prop{"title", str("A working title.", 1, MaxTitle)},
		prop{"genre", str("The genre.", 1, MaxHint)},
		prop{"mood", str("The mood.", 1, MaxHint)},
		prop{"tempoBpm", integer("The tempo in beats per minute.", MinTempo, MaxTempo)},
		prop{"key", str("The musical key, such as A minor.", 1, 24)},
		prop{"vocals", enum("The lead voice; none for an instrumental.", VocalsValues())},
		prop{"instruments", array("The featured instruments, each named once.", str("An instrument.", 1, MaxHint), 1, MaxInstruments)},
		prop{"structure", array("The song's sections in order.", enum("A section.", Sections()), 1, MaxStructure)},
		prop{"durationSeconds", integer("The track's length in seconds.", MinDurationSeconds, MaxDurationSeconds)},
		prop{"description", str("The brief in prose.", 1, 1000)},
		prop{"generationPrompt", str("A prompt for a music generation model that renders this brief.", 1, 1000)},
	)
}

// MusicBrief drafts a music brief from r on c (package doc).
// INVALID_INPUT for a bad field, before any completion; the completer's
// errors as they come; CONTENT_POLICY_REJECTED when the provider withheld
// the answer; GENERATION_FAILED after MaxAttempts invalid answers.
func (s *Service) MusicBrief(ctx context.Context, c Completer, r BriefRequest) (Result[Brief], error) {
	const op = "task.MusicBrief"
	r, err := r.Validate()
	if err != nil {
		return Result[Brief]{}, err
	}
	in := struct {
		Prompt          string `json:"prompt"`
		Genre           string `json:"genre,omitempty"`
		Mood            string `json:"mood,omitempty"`
		Instrumental    bool   `json:"instrumental"`
		DurationSeconds int    `json:"durationSeconds,omitempty"`
	}{r.Prompt, r.Genre, r.Mood, r.Instrumental, r.DurationSeconds}
	msg, err := userMessage(block{"task_input", in})
	if err != nil {
		return Result[Brief]{}, fault.Wrap(op, err)
	}
	sp := s.spec(ai.TaskMusicBrief, op, "Draft a music brief for the creator's idea in task_input.prompt. "+
		"Follow task_input.genre and task_input.mood when given. When task_input.instrumental is true, vocals is none. "+
		"When task_input.durationSeconds is given, durationSeconds is exactly that.", 1024)
	return run(ctx, c, sp, msg, func(b *Brief) []string {
		var problems []string
		if r.Instrumental && b.Vocals != VocalsNone {
			problems = append(problems, "/vocals: must be none, the creator asked for an instrumental")
		}
		if r.DurationSeconds != 0 && b.DurationSeconds != r.DurationSeconds {
			problems = append(problems, fmt.Sprintf("/durationSeconds: must be %d, the length the creator asked for", r.DurationSeconds))
		}
		return append(problems, unique("/instruments/%d", b.Instruments)...)
	})
}
