package task_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/openai"
	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/ai/task"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// simCompleter starts the OpenAI-compatible simulator and returns it with
// a Completer that sends each task's request through the ai/openai
// adapter to model sim-gpt, as the completion path does once it has
// routed.
func simCompleter(t *testing.T) (*openaitest.Server, task.Completer) {
	t.Helper()
	epoch := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sim, err := openaitest.New(openaitest.Config{Clock: fixedClock{epoch}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	c, err := openai.New(openai.Config{BaseURL: sim.BaseURL(), APIKey: sim.APIKey(), HTTPClient: urlguardtest.Client(t, sim.URL()),
		Now: func() time.Time { return epoch }})
	if err != nil {
		t.Fatal(err)
	}
	return sim, task.CompleterFunc(func(ctx context.Context, _ ai.Task, req ai.Request) (ai.Response, error) {
		req.Model = "sim-gpt"
		return c.Complete(ctx, req)
	})
}

// wireRequest is what the adapter sent, as the simulator logged it.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
	Tools               []any
}

func sent(t *testing.T, sim *openaitest.Server) []wireRequest {
	t.Helper()
	var out []wireRequest
	for _, q := range sim.Requests() {
		if q.Path != "/v1/chat/completions" {
			continue
		}
		var w wireRequest
		if err := json.Unmarshal(q.Body, &w); err != nil {
			t.Fatalf("request body: %v", err)
		}
		out = append(out, w)
	}
	return out
}

func TestTasksOverTheOpenAIWire(t *testing.T) {
	s := newService(t)
	for _, tc := range cases() {
		t.Run(string(tc.task), func(t *testing.T) {
			sim, c := simCompleter(t)
			sim.Reply("sim-gpt", openaitest.Reply{JSON: tc.valid}, 1)
			got, attempts, err := tc.run(context.Background(), s, c)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(got, tc.want) || attempts != 1 {
				t.Fatalf("answer %+v after %d attempts, want %+v", got, attempts, tc.want)
			}
			reqs := sent(t, sim)
			if len(reqs) != 1 {
				t.Fatalf("%d requests on the wire", len(reqs))
			}
			w := reqs[0]
			schema, _ := s.Schema(tc.task)
			var a, b any
			_ = json.Unmarshal(w.ResponseFormat.JSONSchema.Schema, &a)
			_ = json.Unmarshal(schema, &b)
			if w.ResponseFormat.Type != "json_schema" || !jsonEqual(a, b) || w.Model != "sim-gpt" || w.MaxCompletionTokens <= 0 || len(w.Tools) != 0 {
				t.Fatalf("wire request: response_format %s %s, model %s, cap %d, tools %v", w.ResponseFormat.Type,
					w.ResponseFormat.JSONSchema.Schema, w.Model, w.MaxCompletionTokens, w.Tools)
			}
			if len(w.Messages) != 2 || w.Messages[0].Role != "system" || w.Messages[1].Role != "user" {
				t.Fatalf("wire messages = %+v", w.Messages)
			}
		})
	}
}

func TestRetryOverTheOpenAIWire(t *testing.T) {
	s := newService(t)
	sim, c := simCompleter(t)
	tc := cases()[4]
	sim.Reply("sim-gpt", openaitest.Reply{JSON: tc.invalid[0]}, 1)
	sim.Reply("sim-gpt", openaitest.Reply{JSON: tc.valid}, 1)
	got, attempts, err := tc.run(context.Background(), s, c)
	if err != nil || attempts != 2 || !jsonEqual(got, tc.want) {
		t.Fatalf("answer %+v after %d attempts, error %v", got, attempts, err)
	}
	reqs := sent(t, sim)
	if len(reqs) != 2 || len(reqs[1].Messages) != 4 || reqs[1].Messages[2].Role != "assistant" ||
		!bytes.Contains([]byte(reqs[1].Messages[3].Content), []byte("/scenes/1/number")) {
		t.Fatalf("retry on the wire: %+v", reqs)
	}
	if n := len(sim.Completions()); n != 2 {
		t.Fatalf("the simulator answered %d completions, want 2 (each attempt is a completion)", n)
	}
}

// The simulator's unscripted answer in JSON mode is an instance of the
// schema sent; every task accepts it for a request without constraints,
// so a host running the simulator answers every task.
func TestSimulatorCannedAnswersAreValid(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	for name, run := range map[string]func(task.Completer) (int, error){
		"music_brief": func(c task.Completer) (int, error) {
			r, err := s.MusicBrief(ctx, c, task.BriefRequest{Prompt: "p"})
			return len(r.Attempts), err
		},
		"lyrics": func(c task.Completer) (int, error) {
			r, err := s.Lyrics(ctx, c, task.LyricsRequest{Prompt: "p"})
			return len(r.Attempts), err
		},
		"prompt_enhance": func(c task.Completer) (int, error) {
			r, err := s.EnhancePrompt(ctx, c, task.EnhanceRequest{Prompt: "p"})
			return len(r.Attempts), err
		},
		"project_analyze": func(c task.Completer) (int, error) {
			r, err := s.AnalyzeProject(ctx, c, readProject, task.AnalyzeRequest{ProjectID: "prj_1"})
			return len(r.Attempts), err
		},
		"project_blueprint": func(c task.Completer) (int, error) {
			r, err := s.Blueprint(ctx, c, task.BlueprintRequest{Brief: "b"})
			return len(r.Attempts), err
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, c := simCompleter(t)
			if attempts, err := run(c); err != nil || attempts != 1 {
				t.Fatalf("canned answer: %d attempts, error %v", attempts, err)
			}
		})
	}
}
