package task

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// Service runs the structured tasks. Build it once with New; it holds the
// compiled answer schemas and is safe for concurrent use. Each task method
// takes the Completer to run on, so that one Service serves every caller.
type Service struct {
	schemas map[ai.Task]compiled
}

// New compiles every task's answer schema.
func New() (*Service, error) {
	s := &Service{schemas: map[ai.Task]compiled{}}
	for t, sch := range map[ai.Task]*schema{
		ai.TaskMusicBrief:       briefSchema(),
		ai.TaskLyrics:           lyricsSchema(),
		ai.TaskPromptEnhance:    enhanceSchema(),
		ai.TaskProjectAnalyze:   analysisSchema(),
		ai.TaskProjectBlueprint: blueprintSchema(),
	} {
		c, err := compile(string(t), sch)
		if err != nil {
			return nil, fault.Wrap("task.New", err)
		}
		s.schemas[t] = c
	}
	return s, nil
}

// Tasks lists the tasks the Service runs, in ai.Tasks order.
func Tasks() []ai.Task {
	return []ai.Task{ai.TaskMusicBrief, ai.TaskLyrics, ai.TaskPromptEnhance, ai.TaskProjectAnalyze, ai.TaskProjectBlueprint}
}

// Schema returns the JSON Schema of t's answer, as sent to the model, and
// whether t is one of Tasks.
func (s *Service) Schema(t ai.Task) (json.RawMessage, bool) {
	c, ok := s.schemas[t]
	if !ok {
		return nil, false
	}
	return slices.Clone(c.raw), true
}

// spec returns t's spec with its task instructions.
func (s *Service) spec(t ai.Task, op, instructions string, maxOutput int) spec {
	return spec{task: t, op: op, system: system(instructions), schema: s.schemas[t], maxOutput: maxOutput}
}

// Bounds shared by the tasks' requests, in characters.
const (
	// MaxPrompt bounds a creator's prompt (music brief, lyrics, prompt
	// enhance).
	MaxPrompt = 2000
	// MaxHint bounds a genre or mood hint.
	MaxHint = 60
)

// text returns v trimmed, or INVALID_INPUT naming field when v is not
// UTF-8, holds a control character other than tab, line feed and
// carriage return, is empty while required, or is longer than maxLen
// characters (details.limit).
func text(op, field, v string, required bool, maxLen int) (string, error) {
	v = strings.TrimSpace(v)
	if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' }) {
		return "", fault.Invalid(op, field, field+" must be UTF-8 text without control characters.")
	}
	n := utf8.RuneCountInString(v)
	if required && n == 0 {
		return "", fault.Invalid(op, field, fmt.Sprintf("%s is required: 1 to %d characters.", field, maxLen)).With("limit", maxLen)
	}
	if n > maxLen {
		return "", fault.Invalid(op, field, fmt.Sprintf("%s must be at most %d characters.", field, maxLen)).With("limit", maxLen)
	}
	return v, nil
}

// languageTag is the shape of a BCP 47 language tag the tasks take
// ("en", "pt-BR", "zh-Hant-TW").
var languageTag = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$`)

// MaxLanguage bounds a language tag.
const MaxLanguage = 35

// lang returns the optional language tag v, trimmed, or INVALID_INPUT.
func lang(op, field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v != "" && (len(v) > MaxLanguage || !languageTag.MatchString(v)) {
		return "", fault.Invalid(op, field, field+" must be a language tag such as en or pt-BR.").With("limit", MaxLanguage)
	}
	return v, nil
}

// unique returns a problem for each value of vals equal, ignoring case,
// to an earlier one; format is the value's path with a %d for its index.
func unique(format string, vals []string) []string {
	var problems []string
	seen := map[string]bool{}
	for i, v := range vals {
		k := strings.ToLower(v)
		if seen[k] {
			problems = append(problems, fmt.Sprintf(format, i)+": repeats an earlier value; values must be distinct")
		}
		seen[k] = true
	}
	return problems
}
