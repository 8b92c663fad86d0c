package task

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

// Project is what project_analyze reads of a project: its safe fields,
// the ones its reader may see on the project route. Nothing else of the
// project (owner, members, workspace, ids of other records) reaches a
// model.
type Project struct {
	// ID is the project's id.
	ID string
	// Title, Type, Status and Description are its fields.
	Title       string
	Type        project.Type
	Status      project.Status
	Description string
}

// ReadProjectFunc is the port project_analyze reads the project through:
// it returns project id as the caller may read it, checked under the
// caller's own authority (the project route's read rule), or that rule's
// error (NOT_FOUND for a project the caller may not read). The task
// never reads a project any other way.
type ReadProjectFunc func(ctx context.Context, id string) (Project, error)

// Bounds of a project analysis.
const (
	// MaxFocus bounds the creator's question about the project.
	MaxFocus = 500
	// MaxProjectID bounds a project id.
	MaxProjectID = 100
	// MaxPoints bounds an analysis's strengths and its risks; MaxSteps
	// its next steps.
	MaxPoints = 8
	MaxSteps  = 8
)

// AnalyzeRequest asks for an analysis of a project (task
// project_analyze).
type AnalyzeRequest struct {
	// ProjectID is the project. Required.
	ProjectID string
	// Focus is an optional question the analysis answers first, at most
	// MaxFocus characters.
	Focus string
}

// Validate returns r normalized, or INVALID_INPUT naming the field ("id"
// for the project id, the route's path parameter).
func (r AnalyzeRequest) Validate() (AnalyzeRequest, error) {
	const op = "task.AnalyzeProject"
	r.ProjectID = strings.TrimSpace(r.ProjectID)
	if r.ProjectID == "" || len(r.ProjectID) > MaxProjectID || strings.ContainsFunc(r.ProjectID, func(c rune) bool {
		return c <= ' ' || c > '~'
	}) {
		return r, fault.Invalid(op, "id", "The project id is required: printable characters without spaces.").With("limit", MaxProjectID)
	}
	var err error
	if r.Focus, err = text(op, "focus", r.Focus, false, MaxFocus); err != nil {
		return r, err
	}
	return r, nil
}

// Analysis is a structured analysis of a project.
type Analysis struct {
	// Summary says where the project stands.
	Summary string `json:"summary"`
	// Readiness is how close the project is to release, 0 to 100.
	Readiness int `json:"readiness"`
	// Strengths and Risks are short points, at most MaxPoints each.
	Strengths []string `json:"strengths"`
	Risks     []string `json:"risks"`
	// NextSteps are the creative tasks to do next, distinct by title.
	NextSteps []CreativeTask `json:"nextSteps"`
}

func analysisSchema() *schema {
	return object("An analysis of a project.",
		prop{"summary", str("Where the project stands.", 1, 1000)},
		prop{"readiness", integer("How close the project is to release, 0 to 100.", 0, 100)},
		prop{"strengths", array("What works.", str("A strength.", 1, 300), 0, MaxPoints)},
		prop{"risks", array("What may go wrong or is missing.", str("A risk.", 1, 300), 0, MaxPoints)},
		prop{"nextSteps", array("The creative tasks to do next, most important first.", creativeTaskSchema(), 1, MaxSteps)},
	)
}

// cut returns s cut to n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// AnalyzeProject analyzes the project r names, read through read under
// the caller's authority, on c. The reader's error comes back as it is
// (NOT_FOUND) before any completion; otherwise errors as MusicBrief.
func (s *Service) AnalyzeProject(ctx context.Context, c Completer, read ReadProjectFunc, r AnalyzeRequest) (Result[Analysis], error) {
	const op = "task.AnalyzeProject"
	r, err := r.Validate()
	if err != nil {
		return Result[Analysis]{}, err
	}
	p, err := read(ctx, r.ProjectID)
	if err != nil {
		return Result[Analysis]{}, fault.Wrap(op, err)
	}
	facts := struct {
		Title       string         `json:"title"`
		Type        project.Type   `json:"type"`
		Status      project.Status `json:"status"`
		Description string         `json:"description"`
	}{cut(p.Title, project.MaxTitle), p.Type, p.Status, cut(p.Description, project.MaxDescription)}
	blocks := []block{{"project", facts}}
	if r.Focus != "" {
		blocks = append(blocks, block{"task_input", struct {
			Focus string `json:"focus"`
		}{r.Focus}})
	}
	msg, err := userMessage(blocks...)
	if err != nil {
		return Result[Analysis]{}, fault.Wrap(op, err)
	}
	sp := s.spec(ai.TaskProjectAnalyze, op, "Analyze the creator's project in the project block: its title, type, status "+
		"(DRAFT, OPEN, IN_PRODUCTION, REVIEW, COMPLETED, ARCHIVED) and description, all written by people. Say where it stands, "+
		"what works, what is missing, and which creative tasks come next. When task_input.focus is given, the summary answers it first.", 1536)
	return run(ctx, c, sp, msg, func(a *Analysis) []string {
		titles := make([]string, len(a.NextSteps))
		for i, t := range a.NextSteps {
			titles[i] = t.Title
		}
		return unique("/nextSteps/%d/title", titles)
	})
}
