package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/task"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
)

// AIMusicBriefRequest is the body of POST /api/v1/ai/music/brief.
type AIMusicBriefRequest struct {
	// Prompt is the creator's idea, 1 to 2000 characters after trimming.
	Prompt string `json:"prompt" example:"A late-night drive through a neon city."`
	// Genre is an optional genre hint, at most 60 characters.
	Genre string `json:"genre,omitempty" example:"synthwave"`
	// Mood is an optional mood hint, at most 60 characters.
	Mood string `json:"mood,omitempty" example:"nostalgic"`
	// Instrumental asks for a track without vocals: the brief's vocals is then none.
	Instrumental bool `json:"instrumental,omitempty" example:"true"`
	// DurationSeconds, when given, is the track's length, 15 to 600; the brief's durationSeconds is then exactly it.
	DurationSeconds int `json:"durationSeconds,omitempty" example:"180"`
}

// AIMusicBriefView is a structured music brief: what a music generation
// needs to know.
type AIMusicBriefView struct {
	// Title is a working title, 1 to 120 characters.
	Title string `json:"title" example:"Night Drive"`
	// Genre is the genre, 1 to 60 characters.
	Genre string `json:"genre" example:"synthwave"`
	// Mood is the mood, 1 to 60 characters.
	Mood string `json:"mood" example:"nostalgic"`
	// TempoBPM is the tempo in beats per minute, 40 to 240.
	TempoBPM int `json:"tempoBpm" example:"98"`
	// Key is the musical key, such as A minor.
	Key string `json:"key" example:"A minor"`
	// Vocals is the lead voice; none for an instrumental.
	Vocals string `json:"vocals" example:"none" enum:"none,female,male,duet,choir"`
	// Instruments are 1 to 12 featured instruments, each named once.
	Instruments []string `json:"instruments" example:"analog synth"`
	// Structure is the song's sections in order, 1 to 16, each one of intro, verse, pre_chorus, chorus, post_chorus, bridge,
	// hook, outro.
	Structure []string `json:"structure" example:"[\"intro\",\"verse\",\"chorus\",\"outro\"]"`
	// DurationSeconds is the track's length, 15 to 600.
	DurationSeconds int `json:"durationSeconds" example:"180"`
	// Description is the brief in prose, at most 1000 characters.
	Description string `json:"description" example:"A slow neon cruise."`
	// GenerationPrompt is a prompt ready for a music generation (POST /api/v1/music/generate), at most 1000 characters.
	GenerationPrompt string `json:"generationPrompt" example:"instrumental synthwave, 98 bpm, A minor, analog synths"`
}

// AILyricsRequest is the body of POST /api/v1/ai/lyrics.
type AILyricsRequest struct {
	// Prompt is what the song is about, 1 to 2000 characters after trimming.
	Prompt string `json:"prompt" example:"Rain on city streets at night."`
	// Genre is an optional genre hint, at most 60 characters.
	Genre string `json:"genre,omitempty" example:"synth-pop"`
	// Mood is an optional mood hint, at most 60 characters.
	Mood string `json:"mood,omitempty" example:"melancholic"`
	// Language is an optional BCP 47 language tag (en, pt-BR), at most 35 characters; absent follows the prompt's language.
	Language string `json:"language,omitempty" example:"en"`
	// Structure, when given, is the sections the lyrics must have, in order: at most 16, each one of intro, verse,
	// pre_chorus, chorus, post_chorus, bridge, hook, outro.
	Structure []string `json:"structure,omitempty" example:"[\"verse\",\"chorus\"]"`
}

// AILyricSectionView is one section of lyrics.
type AILyricSectionView struct {
	// Kind is the section.
	Kind string `json:"kind" example:"chorus" enum:"intro,verse,pre_chorus,chorus,post_chorus,bridge,hook,outro"`
	// Lines are its sung lines, 1 to 16, each 1 to 200 characters.
	Lines []string `json:"lines" example:"Neon rain"`
}

// AILyricsView is a song's words by section.
type AILyricsView struct {
	// Title is the song's title, 1 to 120 characters.
	Title string `json:"title" example:"Neon Rain"`
	// Language is the BCP 47 tag of the words; the requested one when the request named it.
	Language string `json:"language" example:"en"`
	// Sections are the song's sections in order, 1 to 16, at most 120 lines in all; the requested structure when the
	// request gave one.
	Sections []AILyricSectionView `json:"sections"`
}

// AIPromptEnhanceRequest is the body of POST /api/v1/ai/prompts/enhance.
type AIPromptEnhanceRequest struct {
	// Prompt is the creator's prompt, 1 to 2000 characters after trimming.
	Prompt string `json:"prompt" example:"chill beat"`
	// Target is what the prompt is for: music (a music generation, the default), lyrics (a lyrics draft) or visual (an
	// image or video).
	Target string `json:"target,omitempty" example:"music" enum:"music,lyrics,visual"`
}

// AIEnhancedPromptView is an improved generation prompt.
type AIEnhancedPromptView struct {
	// Prompt is the improved prompt, ready for the target's generator, 1 to 2000 characters.
	Prompt string `json:"prompt" example:"Warm lo-fi hip hop with vinyl crackle, mellow Rhodes chords, 80 bpm"`
	// NegativePrompt is what the generation should avoid, at most 500 characters; empty when nothing.
	NegativePrompt string `json:"negativePrompt" example:""`
	// Tags are 0 to 12 short descriptors (genre, instruments, style), each at most 40 characters and distinct.
	Tags []string `json:"tags" example:"lo-fi"`
	// Rationale says briefly what was changed and why, at most 500 characters.
	Rationale string `json:"rationale" example:"Named the instruments and tempo."`
}

// AIProjectAnalyzeRequest is the body of POST
// /api/v1/ai/projects/{id}/analyze.
type AIProjectAnalyzeRequest struct {
	// Focus is an optional question the analysis answers first, at most 500 characters.
	Focus string `json:"focus,omitempty" example:"What is missing before release?"`
}

// AICreativeTaskView is a piece of creative work a project needs, of a
// kind its community can submit.
type AICreativeTaskView struct {
	// Type is the kind of work, a submission type.
	Type string `json:"type" example:"cover_art" enum:"music_video,artwork,animation,remix,short_video,trailer,story,cover_art,audio,other"`
	// Title names the task, 1 to 120 characters; titles are distinct within an answer.
	Title string `json:"title" example:"Cover art"`
	// Description says what the task asks for, at most 500 characters.
	Description string `json:"description" example:"A square cover in the video's palette."`
}

// AIProjectAnalysisView is a structured analysis of a project.
type AIProjectAnalysisView struct {
	// ProjectID is the project analyzed.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Summary says where the project stands, at most 1000 characters; it answers the focus question first when one was
	// asked.
	Summary string `json:"summary" example:"A draft with a clear idea."`
	// Readiness is how close the project is to release, 0 to 100.
	Readiness int `json:"readiness" example:"30"`
	// Strengths are up to 8 short points of what works.
	Strengths []string `json:"strengths" example:"A strong concept"`
	// Risks are up to 8 short points of what may go wrong or is missing.
	Risks []string `json:"risks" example:"No cover art yet"`
	// NextSteps are 1 to 8 creative tasks to do next, most important first.
	NextSteps []AICreativeTaskView `json:"nextSteps"`
}

// AIProjectBlueprintRequest is the body of POST
// /api/v1/projects/ai-blueprint.
type AIProjectBlueprintRequest struct {
	// Brief is the creator's description of the project, 1 to 4000 characters after trimming.
	Brief string `json:"brief" example:"A music video for Night Drive: a lone driver crossing a neon city until dawn."`
	// Genre is an optional genre hint for its music, at most 60 characters.
	Genre string `json:"genre,omitempty" example:"synthwave"`
	// Mood is an optional mood hint, at most 60 characters.
	Mood string `json:"mood,omitempty" example:"nostalgic"`
	// Scenes, when given, is how many scenes the blueprint has, 1 to 12.
	Scenes int `json:"scenes,omitempty" example:"2"`
}

// AISceneView is one scene of a blueprint.
type AISceneView struct {
	// Number is the scene's place: 1 for the first, then 2, 3 ...
	Number int `json:"number" example:"1"`
	// Title names the scene, 1 to 120 characters.
	Title string `json:"title" example:"Garage"`
	// Description says what happens in it, at most 600 characters.
	Description string `json:"description" example:"The car wakes."`
	// DurationSeconds is the scene's length, 1 to 600 seconds.
	DurationSeconds int `json:"durationSeconds" example:"30"`
}

// AIProjectBlueprintView is a proposed project: a plan the creator may
// turn into a project (POST /api/v1/projects), never a project itself.
type AIProjectBlueprintView struct {
	// Title is the proposed project's title, 1 to 120 characters.
	Title string `json:"title" example:"Night Drive"`
	// Genre is the genre of its music, 1 to 60 characters.
	Genre string `json:"genre" example:"synthwave"`
	// Mood is its mood, 1 to 60 characters.
	Mood string `json:"mood" example:"nostalgic"`
	// VisualStyle describes its look, at most 300 characters.
	VisualStyle string `json:"visualStyle" example:"neon-lit 80s film grain"`
	// Scenes are its 1 to 12 scenes in order, numbered from 1, lasting at most 3600 seconds in all; as many as the request
	// asked for when it named a count.
	Scenes []AISceneView `json:"scenes"`
	// CreativeTasks are the 1 to 16 pieces of creative work it needs, with distinct titles.
	CreativeTasks []AICreativeTaskView `json:"creativeTasks"`
	// EstimatedProductionDays is how many days production should take, 1 to 365.
	EstimatedProductionDays int `json:"estimatedProductionDays" example:"21"`
}

// AITaskRunView is what a structured task's request asked of the models:
// its attempts, each an AI operation with its usage record, and what
// they cost together.
type AITaskRunView struct {
	// Task is the routed task.
	Task string `json:"task" example:"music_brief" enum:"music_brief,lyrics,prompt_enhance,project_analyze,project_blueprint"`
	// OperationIDs are the attempts' operations, in order (1, or 2 when the first answer was refused); read each at GET
	// /api/v1/ai/operations/{id}.
	OperationIDs []string `json:"operationIds" example:"aiop_01jd0000000000000000000000"`
	// Operations are those operations' records after they ended, in the same order.
	Operations []AIOperationView `json:"operations"`
	// InputUnits sums the input units the provider reported for every attempt.
	InputUnits int64 `json:"inputUnits" example:"420"`
	// OutputUnits sums the output units the provider reported for every attempt.
	OutputUnits int64 `json:"outputUnits" example:"170"`
	// CreditsReserved sums the attempts' reservations, an integer string.
	CreditsReserved string `json:"creditsReserved" example:"3"`
	// CreditsSettled sums the credits the attempts consumed (each attempt is charged), an integer string.
	CreditsSettled string `json:"creditsSettled" example:"1"`
}

// AIMusicBriefAnswer is the answer of POST /api/v1/ai/music/brief.
type AIMusicBriefAnswer struct {
	// Object is always "ai_music_brief".
	Object string `json:"object" example:"ai_music_brief" enum:"ai_music_brief"`
	// Result is the validated brief.
	Result AIMusicBriefView `json:"result"`
	// Run is the attempts and their usage.
	Run AITaskRunView `json:"run"`
}

// AILyricsAnswer is the answer of POST /api/v1/ai/lyrics.
type AILyricsAnswer struct {
	// Object is always "ai_lyrics".
	Object string `json:"object" example:"ai_lyrics" enum:"ai_lyrics"`
	// Result is the validated lyrics.
	Result AILyricsView `json:"result"`
	// Run is the attempts and their usage.
	Run AITaskRunView `json:"run"`
}

// AIEnhancedPromptAnswer is the answer of POST
// /api/v1/ai/prompts/enhance.
type AIEnhancedPromptAnswer struct {
	// Object is always "ai_enhanced_prompt".
	Object string `json:"object" example:"ai_enhanced_prompt" enum:"ai_enhanced_prompt"`
	// Result is the validated prompt.
	Result AIEnhancedPromptView `json:"result"`
	// Run is the attempts and their usage.
	Run AITaskRunView `json:"run"`
}

// AIProjectAnalysisAnswer is the answer of POST
// /api/v1/ai/projects/{id}/analyze.
type AIProjectAnalysisAnswer struct {
	// Object is always "ai_project_analysis".
	Object string `json:"object" example:"ai_project_analysis" enum:"ai_project_analysis"`
	// Result is the validated analysis.
	Result AIProjectAnalysisView `json:"result"`
	// Run is the attempts and their usage.
	Run AITaskRunView `json:"run"`
}

// AIProjectBlueprintAnswer is the answer of POST
// /api/v1/projects/ai-blueprint.
type AIProjectBlueprintAnswer struct {
	// Object is always "ai_project_blueprint".
	Object string `json:"object" example:"ai_project_blueprint" enum:"ai_project_blueprint"`
	// Result is the validated blueprint: a proposal; no project was created.
	Result AIProjectBlueprintView `json:"result"`
	// Run is the attempts and their usage.
	Run AITaskRunView `json:"run"`
}

// taskRunView sums a task's attempts.
func taskRunView(t ai.Task, ops []ai.Operation) AITaskRunView {
	v := AITaskRunView{Task: string(t), OperationIDs: []string{}, Operations: []AIOperationView{}}
	var reserved, settled int64
	for _, o := range ops {
		v.OperationIDs = append(v.OperationIDs, o.ID)
		v.Operations = append(v.Operations, aiOperationView(o))
		v.InputUnits += o.InputUnits
		v.OutputUnits += o.OutputUnits
		reserved += o.CreditsReserved
		settled += o.Settled()
	}
	v.CreditsReserved, v.CreditsSettled = strconv.FormatInt(reserved, 10), strconv.FormatInt(settled, 10)
	return v
}

// withOperations returns err with details.operationIds naming ops, the
// attempts made before it, so that a caller reads what each cost.
func withOperations(op string, err error, ops []ai.Operation) error {
	if len(ops) == 0 {
		return err
	}
	var fe *fault.Error
	for e := err; errors.As(e, &fe); e = fe.Err {
		if fe.Code != "" {
			break
		}
	}
	if fe == nil || fe.Code == "" {
		return err
	}
	ids := make([]string, len(ops))
	for i, o := range ops {
		ids[i] = o.ID
	}
	d := maps.Clone(fe.Details)
	if d == nil {
		d = map[string]any{}
	}
	d["operationIds"] = ids
	return &fault.Error{Op: op, Code: fe.Code, Message: fe.Message, Details: d, Err: err}
}

// runTask runs one structured task's request for c on its attempts'
// TaskCall: the earlier request with the key answered (BeginTask), the
// task run, a refused answer's attempt ended on its own, and an accepted
// one ended with the answer and its idempotency record in one unit of
// work. view shapes the accepted answer with the run.
func runTask[T any](ctx context.Context, c *Call, svc *ai.Completions, t ai.Task, op string,
	run func(task.Completer) (task.Result[T], error), view func(T, AITaskRunView) any) (any, error) {
	tc, err := svc.BeginTask(ctx, c.Principal, t, identity(c), task.MaxAttempts)
	if err != nil {
		return nil, err
	}
	if tc.Refused() {
		ops := tc.Operations()
		return nil, withOperations(op, task.Refused(t, len(ops)), ops)
	}
	res, err := run(tc)
	if err != nil {
		if cerr := tc.Close(ctx); cerr != nil {
			return nil, fault.Wrap(op, cerr)
		}
		return nil, withOperations(op, err, tc.Operations())
	}
	out, err := c.CommitResult(context.WithoutCancel(ctx), func(tx Tx) (any, error) {
		ops, err := tc.Commit(context.WithoutCancel(ctx), tx)
		if err != nil {
			return nil, err
		}
		return view(res.Answer, taskRunView(t, ops)), nil
	})
	if err != nil && !c.Committed() {
		// The unit rolled back: the accepted attempt still ends, charged.
		if cerr := tc.Close(ctx); cerr != nil {
			return nil, fault.Wrap(op, cerr)
		}
	}
	return out, err
}

// Views of the tasks' answers.

func briefView(b task.Brief) AIMusicBriefView {
	v := AIMusicBriefView{Title: b.Title, Genre: b.Genre, Mood: b.Mood, TempoBPM: b.TempoBPM, Key: b.Key, Vocals: string(b.Vocals),
		Instruments: append([]string{}, b.Instruments...), Structure: []string{}, DurationSeconds: b.DurationSeconds,
		Description: b.Description, GenerationPrompt: b.GenerationPrompt}
	for _, s := range b.Structure {
		v.Structure = append(v.Structure, string(s))
	}
	return v
}

func lyricsView(l task.Lyrics) AILyricsView {
	v := AILyricsView{Title: l.Title, Language: l.Language, Sections: []AILyricSectionView{}}
	for _, s := range l.Sections {
		v.Sections = append(v.Sections, AILyricSectionView{Kind: string(s.Kind), Lines: append([]string{}, s.Lines...)})
	}
	return v
}

func creativeTaskViews(ts []task.CreativeTask) []AICreativeTaskView {
	out := []AICreativeTaskView{}
	for _, t := range ts {
		out = append(out, AICreativeTaskView{Type: string(t.Type), Title: t.Title, Description: t.Description})
	}
	return out
}

func blueprintView(b task.Blueprint) AIProjectBlueprintView {
	v := AIProjectBlueprintView{Title: b.Title, Genre: b.Genre, Mood: b.Mood, VisualStyle: b.VisualStyle, Scenes: []AISceneView{},
		CreativeTasks: creativeTaskViews(b.CreativeTasks), EstimatedProductionDays: b.EstimatedProductionDays}
	for _, s := range b.Scenes {
		v.Scenes = append(v.Scenes, AISceneView{Number: s.Number, Title: s.Title, Description: s.Description, DurationSeconds: s.DurationSeconds})
	}
	return v
}

// sections converts a request's section names.
func sections(in []string) []task.Section {
	var out []task.Section
	for _, s := range in {
		out = append(out, task.Section(s))
	}
	return out
}

// projectReader binds project_analyze's ReadProjectFunc to the project
// service's read under c's principal and authority: the rule of GET
// /api/v1/projects/{id}, whose NOT_FOUND it returns as it is.
func projectReader(c *Call, projects *project.Service) task.ReadProjectFunc {
	return func(ctx context.Context, id string) (task.Project, error) {
		if projects == nil {
			return task.Project{}, fault.E("transport.projectReader", fault.NotFound, "No such project.")
		}
		p, err := projects.Get(ctx, c.Tx, c.Principal, c.Authority, id)
		if err != nil {
			return task.Project{}, err
		}
		return task.Project{ID: p.ID, Title: p.Title, Type: p.Type, Status: p.Status, Description: p.Description}, nil
	}
}

// aiTaskRoutes are the AI control plane's structured task routes (spec,
// AI control plane; issue: task routes): music brief, lyrics, prompt
// enhance, project analyze and the project blueprint. Each asks the
// model for JSON against the task's schema, validates the answer, asks
// again once after an invalid one, and answers the typed result with its
// attempts' operations. Asking needs track.generate (scope ai:use), as
// it spends credits; analyzing a project also needs the read scope and
// the project's read rule. Every route is Preview.
func aiTaskRoutes(svc *ai.Completions, tasks *task.Service, projects *project.Service) []Route {
	if svc == nil || tasks == nil {
		return nil
	}
	route := func(r Route) Route {
		r.Method, r.Tag, r.Auth, r.Private, r.Maturity = http.MethodPost, transport.TagAI, transport.AuthSessionOrKey, true, transport.Preview
		r.Permission, r.Scope = access.TrackGenerate, access.ScopeAI
		r.Idempotency, r.OwnUnitOfWork, r.BodyLimit = transport.IdempotencyOptional, true, 64<<10
		r.Errors = append(r.Errors, string(fault.InsufficientCredits), string(fault.GenerationFailed), string(fault.ContentPolicyRejected),
			string(fault.ProviderUnavailable), string(fault.ProviderTimeout), string(fault.ProviderCreditsExhausted), string(fault.RateLimited))
		return r
	}
	lim := svc.Limits()
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one, three, two, src, finish, upstream := "1", "3", "2", "reported", "completed", "gpt-4o-mini-2024-07-18"
	ref := PolicyRefView{ID: ai.PolicyRouting, Version: 3, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	exRun := func(tk ai.Task) AITaskRunView {
		o := AIOperationView{ID: "aiop_01jd0000000000000000000000", Object: "ai_operation", Environment: "test", Endpoint: "task", Task: string(tk),
			Mode: "json", Status: "completed", Finish: &finish,
			Routing: AIRoutingRecordView{Policy: ref, Reason: "primary", Model: "gpt-4o-mini", Provider: "openai", UpstreamModel: &upstream,
				Attempts: []AIAttemptView{{Model: "gpt-4o-mini", Provider: "openai", Outcome: "success", LatencyMs: 840}}},
			Usage: AIUsageView{InputUnits: 420, OutputUnits: 170, Source: &src, CreditsReserved: three, CreditsSettled: &one, CreditsReleased: &two,
				PricingPolicy: PolicyRefView{ID: ai.PolicyCredits, Version: 1, Hash: ref.Hash}, LatencyMs: 910},
			CreatedAt: t, UpdatedAt: t, EndedAt: &t}
		return AITaskRunView{Task: string(tk), OperationIDs: []string{o.ID}, Operations: []AIOperationView{o}, InputUnits: 420, OutputUnits: 170,
			CreditsReserved: three, CreditsSettled: one}
	}
	schema := func(tk ai.Task) string {
		s, _ := tasks.Schema(tk)
		return string(s)
	}
	common := func(tk ai.Task, what string) string {
		return fmt.Sprintf("The model the %s task's route chooses (GET /api/v1/ai/routing) is asked for one JSON object against "+
			"the task's answer schema (draft 2020-12, closed objects, every property required; the OpenAI-compatible wire sends it "+
			"as response_format json_schema, the Anthropic wire as an instruction): %s. Every answer is validated here, whatever "+
			"the provider enforced: one JSON object (one enclosing Markdown code fence tolerated), at most 64 KiB, the schema, then "+
			"the rules above; %s The request's text reaches the model as data between tags, never as instructions, and no tool "+
			"is offered. An invalid answer (or one cut at the output cap, or a tool call) is asked again once, with the platform's "+
			"list of its problems; a second invalid answer is 502 GENERATION_FAILED (details: task, attempts, reason "+
			"invalid_answer, operationIds) and nothing is fabricated or filled in. Each attempt is an AI operation of its own "+
			"(endpoint task) with its usage record: credits are reserved before its provider call (the task's output cap at the "+
			"dearest model the route allows; not covered: 422 INSUFFICIENT_CREDITS and no provider call, the first attempt's "+
			"charge kept when it is the retry that cannot be paid) and settled on the provider's reported usage, exactly once "+
			"through the ledger; a refused answer is charged like an accepted one (the provider served it), so a failed request "+
			"keeps both attempts' charges, listed by details.operationIds. The answer holds the result and run: the attempts' "+
			"operation ids (GET /api/v1/ai/operations/{id}), their records and their units and credits summed. Provider failures "+
			"fall back and retry as on POST /api/v1/ai/complete (at most %d calls within %s per attempt) and answer their code "+
			"(503 PROVIDER_UNAVAILABLE, 429 RATE_LIMITED, 402 PROVIDER_CREDITS_EXHAUSTED, 422 CONTENT_POLICY_REJECTED, 504 "+
			"PROVIDER_TIMEOUT) with details.operationId, never retried by the task. An Idempotency-Key (optional, as on POST "+
			"/api/v1/ai/complete) makes a retry of an answered request replay its answer with no new attempt; another body with "+
			"the key is 409 IDEMPOTENCY_CONFLICT; while the first request runs a duplicate is 409 IDEMPOTENCY_IN_PROGRESS before "+
			"it spends anything (each attempt's operation holds the key); a retry of a request that failed answers its failure "+
			"again (GENERATION_FAILED when both answers were refused) without asking the model; a request that ended without an "+
			"answer before its retry's operation (its credits did not cover it) is 409 IDEMPOTENCY_CONFLICT with details.reason "+
			"unanswered once its first attempt ended more than %s ago: use a new key.", tk, what, schema(tk), lim.MaxAttempts,
			lim.MaxDuration, lim.MaxDuration)
	}
	exBrief := AIMusicBriefView{Title: "Night Drive", Genre: "synthwave", Mood: "nostalgic", TempoBPM: 98, Key: "A minor", Vocals: "none",
		Instruments: []string{"analog synth", "drum machine"}, Structure: []string{"intro", "verse", "chorus", "outro"}, DurationSeconds: 180,
		Description: "A slow neon cruise.", GenerationPrompt: "instrumental synthwave, 98 bpm, A minor, analog synths"}
	exLyrics := AILyricsView{Title: "Neon Rain", Language: "en", Sections: []AILyricSectionView{
		{Kind: "verse", Lines: []string{"City lights are bleeding", "Through the glass"}}, {Kind: "chorus", Lines: []string{"Neon rain", "Neon rain"}}}}
	exPrompt := AIEnhancedPromptView{Prompt: "Warm lo-fi hip hop with vinyl crackle, mellow Rhodes chords, 80 bpm", Tags: []string{"lo-fi", "rhodes"},
		Rationale: "Named the instruments and tempo."}
	exSteps := []AICreativeTaskView{{Type: "cover_art", Title: "Cover art", Description: "A square cover in the video's palette."}}
	exAnalysis := AIProjectAnalysisView{ProjectID: "prj_01jd0000000000000000000000", Summary: "A draft with a clear idea.", Readiness: 30,
		Strengths: []string{"A strong concept"}, Risks: []string{"No cover art yet"}, NextSteps: exSteps}
	exBlueprint := AIProjectBlueprintView{Title: "Night Drive", Genre: "synthwave", Mood: "nostalgic", VisualStyle: "neon-lit 80s film grain",
		Scenes: []AISceneView{{Number: 1, Title: "Garage", Description: "The car wakes.", DurationSeconds: 30},
			{Number: 2, Title: "Highway", Description: "City lights stream by.", DurationSeconds: 90}},
		CreativeTasks: []AICreativeTaskView{{Type: "music_video", Title: "Shoot the drive", Description: "Film the highway scenes."},
			{Type: "cover_art", Title: "Cover", Description: "A neon cover."}}, EstimatedProductionDays: 21}
	return []Route{
		route(Route{Pattern: "/api/v1/ai/music/brief", OperationID: "createAiMusicBrief",
			Summary: "Draft a music brief",
			Description: "Drafts a structured music brief (title, genre, mood, tempo, key, vocals, instruments, structure, duration, " +
				"description and a prompt ready for a music generation) from the creator's idea, following the genre and mood hints. " +
				"prompt is 1 to 2000 characters, genre and mood at most 60, durationSeconds 15 to 600; else 400 INVALID_INPUT naming " +
				"the field, before any credit is reserved. " + common(ai.TaskMusicBrief, "an instrumental's brief has vocals none and "+
				"a requested duration is the brief's, instruments are distinct."),
			Request:  AIMusicBriefRequest{Prompt: "A late-night drive through a neon city.", Genre: "synthwave", Instrumental: true, DurationSeconds: 180},
			Response: AIMusicBriefAnswer{Object: "ai_music_brief", Result: exBrief, Run: exRun(ai.TaskMusicBrief)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIMusicBriefRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := task.BriefRequest{Prompt: in.Prompt, Genre: in.Genre, Mood: in.Mood, Instrumental: in.Instrumental, DurationSeconds: in.DurationSeconds}
				if _, err := req.Validate(); err != nil {
					return nil, err
				}
				return runTask(ctx, c, svc, ai.TaskMusicBrief, "transport.createAiMusicBrief",
					func(tc task.Completer) (task.Result[task.Brief], error) { return tasks.MusicBrief(ctx, tc, req) },
					func(b task.Brief, run AITaskRunView) any {
						return AIMusicBriefAnswer{Object: "ai_music_brief", Result: briefView(b), Run: run}
					})
			}}),
		route(Route{Pattern: "/api/v1/ai/lyrics", OperationID: "createAiLyrics",
			Summary: "Draft lyrics",
			Description: "Writes song lyrics by section (title, language, sections of sung lines) about the creator's prompt, in " +
				"the requested language and structure when given. prompt is 1 to 2000 characters, genre and mood at most 60, " +
				"language a BCP 47 tag, structure at most 16 sections of intro, verse, pre_chorus, chorus, post_chorus, bridge, hook, " +
				"outro; else 400 INVALID_INPUT naming the field, before any credit is reserved. " + common(ai.TaskLyrics, "at most "+
				"120 lines in all, the requested language, and the requested structure's kinds in order."),
			Request:  AILyricsRequest{Prompt: "Rain on city streets at night.", Language: "en", Structure: []string{"verse", "chorus"}},
			Response: AILyricsAnswer{Object: "ai_lyrics", Result: exLyrics, Run: exRun(ai.TaskLyrics)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AILyricsRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := task.LyricsRequest{Prompt: in.Prompt, Genre: in.Genre, Mood: in.Mood, Language: in.Language, Structure: sections(in.Structure)}
				if _, err := req.Validate(); err != nil {
					return nil, err
				}
				return runTask(ctx, c, svc, ai.TaskLyrics, "transport.createAiLyrics",
					func(tc task.Completer) (task.Result[task.Lyrics], error) { return tasks.Lyrics(ctx, tc, req) },
					func(l task.Lyrics, run AITaskRunView) any {
						return AILyricsAnswer{Object: "ai_lyrics", Result: lyricsView(l), Run: run}
					})
			}}),
		route(Route{Pattern: "/api/v1/ai/prompts/enhance", OperationID: "enhanceAiPrompt",
			Summary: "Enhance a generation prompt",
			Description: "Rewrites the creator's prompt into a clearer, more specific one for the target's generator (music, lyrics " +
				"or visual), with what to avoid, tags and a rationale, keeping the creator's intent. prompt is 1 to 2000 characters, " +
				"target one of music (default), lyrics, visual; else 400 INVALID_INPUT naming the field, before any credit is " +
				"reserved. " + common(ai.TaskPromptEnhance, "tags are distinct."),
			Request:  AIPromptEnhanceRequest{Prompt: "chill beat", Target: "music"},
			Response: AIEnhancedPromptAnswer{Object: "ai_enhanced_prompt", Result: exPrompt, Run: exRun(ai.TaskPromptEnhance)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIPromptEnhanceRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := task.EnhanceRequest{Prompt: in.Prompt, Target: task.Target(in.Target)}
				if _, err := req.Validate(); err != nil {
					return nil, err
				}
				return runTask(ctx, c, svc, ai.TaskPromptEnhance, "transport.enhanceAiPrompt",
					func(tc task.Completer) (task.Result[task.EnhancedPrompt], error) {
						return tasks.EnhancePrompt(ctx, tc, req)
					},
					func(e task.EnhancedPrompt, run AITaskRunView) any {
						return AIEnhancedPromptAnswer{Object: "ai_enhanced_prompt", Run: run, Result: AIEnhancedPromptView{Prompt: e.Prompt,
							NegativePrompt: e.NegativePrompt, Tags: append([]string{}, e.Tags...), Rationale: e.Rationale}}
					})
			}}),
		route(Route{Pattern: "/api/v1/ai/projects/{id}/analyze", OperationID: "analyzeAiProject",
			Summary: "Analyze a project",
			Description: "Analyzes a project (where it stands, readiness 0 to 100, strengths, risks and the creative tasks to do " +
				"next), answering the optional focus question first. The project is read under the caller's own authority by the " +
				"rule of GET /api/v1/projects/{id}, before any credit is reserved: a project of the caller's workspace its " +
				"project.read grant reaches or that is public, or a public project of another tenant in the caller's environment; " +
				"anything else, and anything of the other environment, is 404 NOT_FOUND exactly as that route answers it. Besides " +
				"ai:use an API key needs the read scope, as that route does. Only the project's title, type, status and description " +
				"reach the model. focus is at most 500 characters; else 400 INVALID_INPUT. " + common(ai.TaskProjectAnalyze,
				"next steps have distinct titles."),
			Request:  AIProjectAnalyzeRequest{Focus: "What is missing before release?"},
			Response: AIProjectAnalysisAnswer{Object: "ai_project_analysis", Result: exAnalysis, Run: exRun(ai.TaskProjectAnalyze)},
			Errors:   []string{string(fault.NotFound)},
			Policy: Policy{ScopesFunc: func(*Call) []string { return []string{access.ScopeRead} },
				Note: "Reading the project also needs the read scope (workspace.read, project.read)."},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIProjectAnalyzeRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := task.AnalyzeRequest{ProjectID: c.PathValue("id"), Focus: in.Focus}
				if _, err := req.Validate(); err != nil {
					return nil, err
				}
				read := projectReader(c, projects)
				// The project is read before anything is asked or spent.
				if _, err := read(ctx, req.ProjectID); err != nil {
					return nil, err
				}
				return runTask(ctx, c, svc, ai.TaskProjectAnalyze, "transport.analyzeAiProject",
					func(tc task.Completer) (task.Result[task.Analysis], error) {
						return tasks.AnalyzeProject(ctx, tc, read, req)
					},
					func(a task.Analysis, run AITaskRunView) any {
						return AIProjectAnalysisAnswer{Object: "ai_project_analysis", Run: run, Result: AIProjectAnalysisView{ProjectID: req.ProjectID,
							Summary: a.Summary, Readiness: a.Readiness, Strengths: append([]string{}, a.Strengths...),
							Risks: append([]string{}, a.Risks...), NextSteps: creativeTaskViews(a.NextSteps)}}
					})
			}}),
		route(Route{Pattern: "/api/v1/projects/ai-blueprint", OperationID: "createAiProjectBlueprint",
			Summary: "Propose a project blueprint",
			Description: "Proposes a creative project from the creator's brief: a title, the genre and mood of its music, a visual " +
				"style, scenes numbered from 1, the creative tasks it needs (of the submission types) and an estimate of production " +
				"days. It is a proposal returned to the caller: no project is created, nothing of the workspace changes but the " +
				"credits; create one with POST /api/v1/projects. brief is 1 to 4000 characters, genre and mood at most 60, scenes 1 " +
				"to 12; else 400 INVALID_INPUT naming the field, before any credit is reserved. " + common(ai.TaskProjectBlueprint,
				"scenes are numbered 1 to N in order, as many as asked, 3600 seconds at most in all, creative tasks have distinct titles."),
			Request:  AIProjectBlueprintRequest{Brief: "A music video for Night Drive: a lone driver crossing a neon city until dawn.", Scenes: 2},
			Response: AIProjectBlueprintAnswer{Object: "ai_project_blueprint", Result: exBlueprint, Run: exRun(ai.TaskProjectBlueprint)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AIProjectBlueprintRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := task.BlueprintRequest{Brief: in.Brief, Genre: in.Genre, Mood: in.Mood, Scenes: in.Scenes}
				if _, err := req.Validate(); err != nil {
					return nil, err
				}
				return runTask(ctx, c, svc, ai.TaskProjectBlueprint, "transport.createAiProjectBlueprint",
					func(tc task.Completer) (task.Result[task.Blueprint], error) { return tasks.Blueprint(ctx, tc, req) },
					func(b task.Blueprint, run AITaskRunView) any {
						return AIProjectBlueprintAnswer{Object: "ai_project_blueprint", Result: blueprintView(b), Run: run}
					})
			}}),
	}
}
