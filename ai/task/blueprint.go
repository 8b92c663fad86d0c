package task

import (
	"context"
	"fmt"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

// Bounds of a project blueprint.
const (
	// MaxBrief bounds the creator's brief for a blueprint.
	MaxBrief = 4000
	// MaxScenes bounds a blueprint's scenes (and the count a request asks
	// for).
	MaxScenes = 12
	// MaxSceneSeconds bounds one scene's length; MaxBlueprintSeconds all
	// scenes together.
	MaxSceneSeconds     = 600
	MaxBlueprintSeconds = 3600
	// MaxCreativeTasks bounds a blueprint's creative tasks.
	MaxCreativeTasks = 16
	// MaxProductionDays bounds the estimated production days.
	MaxProductionDays = 365
	// MaxVisualStyle bounds the visual style.
	MaxVisualStyle = 300
)

// CreativeTask is a piece of creative work a project needs, of a kind
// its community can submit (project.SubmissionTypes).
type CreativeTask struct {
	// Type is the kind of work, a submission type.
	Type project.SubmissionType `json:"type"`
	// Title names the task.
	Title string `json:"title"`
	// Description says what the task asks for.
	Description string `json:"description"`
}

func creativeTaskSchema() *schema {
	return object("A piece of creative work.",
		prop{"type", enum("The kind of work.", project.SubmissionTypes())},
		prop{"title", str("A short name for the task.", 1, MaxTitle)},
		prop{"description", str("What the task asks for.", 1, 500)},
	)
}

// BlueprintRequest asks for a project blueprint (task
// project_blueprint).
type BlueprintRequest struct {
	// Brief is the creator's description of the project. Required, at
	// most MaxBrief characters.
	Brief string
	// Genre and Mood are optional hints, at most MaxHint characters.
	Genre string
	Mood  string
	// Scenes, when not zero, is how many scenes the blueprint has (1 to
	// MaxScenes); zero lets the model choose.
	Scenes int
}

// Validate returns r normalized, or INVALID_INPUT naming the field.
func (r BlueprintRequest) Validate() (BlueprintRequest, error) {
	const op = "task.Blueprint"
	var err error
	if r.Brief, err = text(op, "brief", r.Brief, true, MaxBrief); err != nil {
		return r, err
	}
	if r.Genre, err = text(op, "genre", r.Genre, false, MaxHint); err != nil {
		return r, err
	}
	if r.Mood, err = text(op, "mood", r.Mood, false, MaxHint); err != nil {
		return r, err
	}
	if r.Scenes < 0 || r.Scenes > MaxScenes {
		return r, fault.Invalid(op, "scenes", fmt.Sprintf("scenes must be 1 to %d, or omitted.", MaxScenes)).With("limit", MaxScenes)
	}
	return r, nil
}

// Blueprint is a proposed project: a plan the creator may turn into a
// project, never a project itself.
type Blueprint struct {
	// Title is the proposed project's title.
	Title string `json:"title"`
	// Genre and Mood describe its music.
	Genre string `json:"genre"`
	Mood  string `json:"mood"`
	// VisualStyle describes its look.
	VisualStyle string `json:"visualStyle"`
	// Scenes are its scenes in order, numbered from 1.
	Scenes []Scene `json:"scenes"`
	// CreativeTasks are the pieces of work it needs.
	CreativeTasks []CreativeTask `json:"creativeTasks"`
	// EstimatedProductionDays is how long production should take, 1 to
	// MaxProductionDays.
	EstimatedProductionDays int `json:"estimatedProductionDays"`
}

// Scene is one scene of a blueprint.
type Scene struct {
	// Number is the scene's place, from 1.
	Number int `json:"number"`
	// Title names the scene; Description says what happens.
	Title       string `json:"title"`
	Description string `json:"description"`
	// DurationSeconds is the scene's length.
	DurationSeconds int `json:"durationSeconds"`
}

func blueprintSchema() *schema {
	return object("A proposed creative project.",
		prop{"title", str("The project's title.", 1, MaxTitle)},
		prop{"genre", str("The genre of its music.", 1, MaxHint)},
		prop{"mood", str("Its mood.", 1, MaxHint)},
		prop{"visualStyle", str("Its visual style.", 1, MaxVisualStyle)},
		prop{"scenes", array("Its scenes in order.", object("One scene.",
			prop{"number", integer("The scene's place: 1 for the first, then 2, 3 ...", 1, MaxScenes)},
			prop{"title", str("The scene's name.", 1, MaxTitle)},
			prop{"description", str("What happens in the scene.", 1, 600)},
			prop{"durationSeconds", integer("The scene's length in seconds.", 1, MaxSceneSeconds)},
		), 1, MaxScenes)},
		prop{"creativeTasks", array("The pieces of creative work the project needs.", creativeTaskSchema(), 1, MaxCreativeTasks)},
		prop{"estimatedProductionDays", integer("How many days production should take.", 1, MaxProductionDays)},
	)
}

// Blueprint proposes a project from r on c: a proposal returned to the
// caller, never a created project. Errors as MusicBrief: an invalid
// answer is asked again once, then GENERATION_FAILED, never a blueprint
// the model did not give.
func (s *Service) Blueprint(ctx context.Context, c Completer, r BlueprintRequest) (Result[Blueprint], error) {
	const op = "task.Blueprint"
	r, err := r.Validate()
	if err != nil {
		return Result[Blueprint]{}, err
	}
	in := struct {
		Brief  string `json:"brief"`
		Genre  string `json:"genre,omitempty"`
		Mood   string `json:"mood,omitempty"`
		Scenes int    `json:"scenes,omitempty"`
	}{r.Brief, r.Genre, r.Mood, r.Scenes}
	msg, err := userMessage(block{"task_input", in})
	if err != nil {
		return Result[Blueprint]{}, fault.Wrap(op, err)
	}
	sp := s.spec(ai.TaskProjectBlueprint, op, fmt.Sprintf("Propose a creative project (for example a music video) from the creator's "+
		"brief in task_input.brief: a title, the genre and mood of its music, its visual style, its scenes numbered from 1 in order, "+
		"the creative tasks it needs and a realistic estimate of production days. Follow task_input.genre and task_input.mood when "+
		"given. When task_input.scenes is given, there are exactly that many scenes. Scenes last %d seconds at most in all.",
		MaxBlueprintSeconds), 3072)
	return run(ctx, c, sp, msg, func(b *Blueprint) []string {
		var problems []string
		total := 0
		for i, sc := range b.Scenes {
			if sc.Number != i+1 {
				problems = append(problems, fmt.Sprintf("/scenes/%d/number: must be %d; scenes are numbered 1 to %d in order", i, i+1, len(b.Scenes)))
			}
			total += sc.DurationSeconds
		}
		if r.Scenes != 0 && len(b.Scenes) != r.Scenes {
			problems = append(problems, fmt.Sprintf("/scenes: must hold exactly %d scenes, as the creator asked", r.Scenes))
		}
		if total > MaxBlueprintSeconds {
			problems = append(problems, fmt.Sprintf("/scenes: the scenes last %d seconds in all; at most %d", total, MaxBlueprintSeconds))
		}
		titles := make([]string, len(b.CreativeTasks))
		for i, t := range b.CreativeTasks {
			titles[i] = t.Title
		}
		return append(problems, unique("/creativeTasks/%d/title", titles)...)
	})
}
