package task

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// Bounds of lyrics.
const (
	// MaxLyricSections bounds the sections of lyrics (and of a requested
	// structure).
	MaxLyricSections = 16
	// MaxSectionLines bounds one section's lines.
	MaxSectionLines = 16
	// MaxLyricLines bounds the lines of all sections together.
	MaxLyricLines = 120
	// MaxLineLength bounds one line, in characters.
	MaxLineLength = 200
)

// LyricsRequest asks for lyrics (task lyrics).
type LyricsRequest struct {
	// Prompt is what the song is about. Required, at most MaxPrompt
	// characters.
	Prompt string
	// Genre and Mood are optional hints, at most MaxHint characters.
	Genre string
	Mood  string
	// Language is an optional BCP 47 tag ("en", "pt-BR"); empty follows
	// the prompt's language.
	Language string
	// Structure, when given, is the sections the lyrics must have, in
	// order (at most MaxLyricSections).
	Structure []Section
}

// Validate returns r normalized, or INVALID_INPUT naming the field.
func (r LyricsRequest) Validate() (LyricsRequest, error) {
	const op = "task.Lyrics"
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
	if r.Language, err = lang(op, "language", r.Language); err != nil {
		return r, err
	}
	if len(r.Structure) > MaxLyricSections {
		return r, fault.Invalid(op, "structure", fmt.Sprintf("structure has at most %d sections.", MaxLyricSections)).With("limit", MaxLyricSections)
	}
	for i, s := range r.Structure {
		if !slices.Contains(Sections(), s) {
			return r, fault.Invalid(op, "structure["+strconv.Itoa(i)+"]", "A section is one of intro, verse, pre_chorus, chorus, "+
				"post_chorus, bridge, hook, outro.")
		}
	}
	return r, nil
}

// Lyrics are a song's words by section.
type Lyrics struct {
	// Title is the song's title.
	Title string `json:"title"`
	// Language is the BCP 47 tag of the words.
	Language string `json:"language"`
	// Sections are the song's sections in order.
	Sections []LyricSection `json:"sections"`
}

// LyricSection is one section of lyrics.
type LyricSection struct {
	// Kind is the section.
	Kind Section `json:"kind"`
	// Lines are its lines, 1 to MaxSectionLines.
	Lines []string `json:"lines"`
}

func lyricsSchema() *schema {
	return object("Song lyrics.",
		prop{"title", str("The song's title.", 1, MaxTitle)},
		prop{"language", str("The BCP 47 language tag of the lyrics, such as en.", 2, MaxLanguage)},
		prop{"sections", array("The song's sections in order.", object("One section.",
			prop{"kind", enum("The section.", Sections())},
			prop{"lines", array("The section's lines, one sung line each.", str("A line.", 1, MaxLineLength), 1, MaxSectionLines)},
		), 1, MaxLyricSections)},
	)
}

// Lyrics drafts lyrics from r on c. Errors as MusicBrief.
func (s *Service) Lyrics(ctx context.Context, c Completer, r LyricsRequest) (Result[Lyrics], error) {
	const op = "task.Lyrics"
	r, err := r.Validate()
	if err != nil {
		return Result[Lyrics]{}, err
	}
	in := struct {
		Prompt    string    `json:"prompt"`
		Genre     string    `json:"genre,omitempty"`
		Mood      string    `json:"mood,omitempty"`
		Language  string    `json:"language,omitempty"`
		Structure []Section `json:"structure,omitempty"`
	}{r.Prompt, r.Genre, r.Mood, r.Language, r.Structure}
	msg, err := userMessage(block{"task_input", in})
	if err != nil {
		return Result[Lyrics]{}, fault.Wrap(op, err)
	}
	sp := s.spec(ai.TaskLyrics, op, fmt.Sprintf("Write song lyrics about task_input.prompt, in the genre and mood given, if any. "+
		"When task_input.language is given, write in that language and set language to it. When task_input.structure is given, "+
		"the sections are exactly those kinds in that order. At most %d lines in all.", MaxLyricLines), 2048)
	return run(ctx, c, sp, msg, func(l *Lyrics) []string {
		var problems []string
		lines := 0
		for _, sec := range l.Sections {
			lines += len(sec.Lines)
		}
		if lines > MaxLyricLines {
			problems = append(problems, fmt.Sprintf("/sections: %d lines in all; at most %d", lines, MaxLyricLines))
		}
		if r.Language != "" && !strings.EqualFold(l.Language, r.Language) {
			problems = append(problems, "/language: must be "+r.Language+", the language the creator asked for")
		}
		if len(r.Structure) > 0 {
			kinds := make([]Section, len(l.Sections))
			for i, sec := range l.Sections {
				kinds[i] = sec.Kind
			}
			if !slices.Equal(kinds, r.Structure) {
				problems = append(problems, "/sections: the section kinds must be, in order, the structure the creator asked for")
			}
		}
		return problems
	})
}
