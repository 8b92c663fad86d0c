package main

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/anthropic/anthropictest"
	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/urlguard"
)

// The test environment's AI registry: two providers, one model each, with
// ids that stay when -ai-openai-url puts a real server behind "openai",
// so the routing policy published on first start keeps naming them.
const (
	// aiOpenAI is the OpenAI-compatible provider (the simulator, or the
	// server -ai-openai-url names) and the KeyRef of its key.
	aiOpenAI = "openai"
	// aiAnthropic is the Anthropic provider (the simulator) and the KeyRef
	// of its key.
	aiAnthropic = "anthropic"
	// aiGeneral is the model every task tries first, served by aiOpenAI.
	aiGeneral = "general"
	// aiPrivate is the no-retention model, served by aiAnthropic: the
	// fallback of every task and the primary of project_analyze, whose
	// project data never reaches a model of the standard class.
	aiPrivate = "private"
	// aiContextWindow is both models' context window, in units: the
	// simulators' default models' (an upstream's may be larger; the
	// registry only needs to be no larger than what the model takes).
	aiContextWindow = 8192
	// defaultAIModel is the upstream model -ai-openai-model names by
	// default.
	defaultAIModel = "gpt-4o-mini"
)

// aiOptions say how the host sets up the test environment's AI providers.
type aiOptions struct {
	// sim starts both AI simulators (the OpenAI-compatible one unless url
	// names a real server).
	sim bool
	// url, key and model point the OpenAI-compatible provider at a real
	// server: its base URL (…/v1), its key ("" for a server that takes
	// none) and the upstream model name.
	url, key, model string
}

// aiSetup is the test environment's AI configuration the host built: the
// simulators it started, the providers, models and routing to seed, the
// provider keys (handed to the platform, which seals them and keeps no
// plaintext) and the loopback addresses the AI URL guard must let through.
type aiSetup struct {
	openai    *openaitest.Server
	anthropic *anthropictest.Server
	env       ai.Environment
	keys      ai.ProviderKeys
	allow     []netip.AddrPort
	// upstream is the real server's base URL host and model, "" with the
	// simulator.
	upstream, model string
}

// startAI starts what o asks for and builds the configuration; nil when
// neither a simulator nor a server is asked for. On error, the
// simulators already started are stopped.
func startAI(o aiOptions) (s *aiSetup, err error) {
	var upstream *url.URL
	var loopback bool
	if o.url != "" {
		if upstream, loopback, err = aiUpstreamURL(o.url); err != nil {
			return nil, err
		}
	} else if o.key != "" || o.model != "" {
		return nil, errors.New("-ai-openai-key and -ai-openai-model need -ai-openai-url")
	}
	if !o.sim && upstream == nil {
		return nil, nil
	}
	s = &aiSetup{keys: ai.ProviderKeys{}}
	defer func() {
		if err != nil {
			s.close()
			s = nil
		}
	}()
	all := []ai.Capability{ai.CapChat, ai.CapJSONOutput, ai.CapTools, ai.CapStreaming}
	general := ai.ModelConfig{ID: aiGeneral, ProviderID: aiOpenAI, Upstream: "sim-gpt", Capabilities: all,
		ContextWindow: aiContextWindow, Privacy: ai.PrivacyStandard, InputPrice: "0.00000015", OutputPrice: "0.0000006"}
	openai := ai.ProviderConfig{ID: aiOpenAI, Kind: ai.KindOpenAICompatible, KeyRef: aiOpenAI}
	if upstream != nil {
		openai.DisplayName, openai.BaseURL = "OpenAI-compatible server", upstream.String()
		if o.key == "" {
			openai.KeyRef, openai.Keyless = "", true
		} else {
			s.keys[aiOpenAI] = o.key
		}
		if o.model == "" {
			o.model = defaultAIModel
		}
		general.Upstream, s.upstream, s.model = o.model, upstream.Host, o.model
		if loopback {
			// A server on this machine keeps the data on it.
			general.Privacy = ai.PrivacyLocal
			ap, err := urlguard.LoopbackOf(upstream.String())
			if err != nil {
				return s, err
			}
			s.allow = append(s.allow, ap)
		}
	} else {
		if s.openai, err = openaitest.New(openaitest.Config{ControlKey: simctl.RandomHex(16)}); err != nil {
			return s, fmt.Errorf("OpenAI-compatible simulator: %w", err)
		}
		openai.DisplayName, openai.BaseURL = "OpenAI-compatible simulator", s.openai.BaseURL()
		s.keys[aiOpenAI] = s.openai.APIKey()
		if err := s.allowSim(s.openai.URL()); err != nil {
			return s, err
		}
	}
	s.env.Providers = append(s.env.Providers, openai)
	s.env.Models = append(s.env.Models, general)
	if o.sim {
		if s.anthropic, err = anthropictest.New(anthropictest.Config{ControlKey: simctl.RandomHex(16)}); err != nil {
			return s, fmt.Errorf("anthropic simulator: %w", err)
		}
		s.env.Providers = append(s.env.Providers, ai.ProviderConfig{ID: aiAnthropic, Kind: ai.KindAnthropic,
			DisplayName: "Anthropic simulator", BaseURL: s.anthropic.URL(), KeyRef: aiAnthropic})
		s.env.Models = append(s.env.Models, ai.ModelConfig{ID: aiPrivate, ProviderID: aiAnthropic, Upstream: "sim-claude",
			Capabilities: all, ContextWindow: aiContextWindow, Privacy: ai.PrivacyNoRetention, InputPrice: "0.000003", OutputPrice: "0.000015"})
		s.keys[aiAnthropic] = s.anthropic.APIKey()
		if err := s.allowSim(s.anthropic.URL()); err != nil {
			return s, err
		}
	}
	s.env.Routing = aiRouting(s.anthropic != nil)
	return s, nil
}

// aiRouting is the routing policy seeded where the test environment has
// none, so that every task resolves: each task tries general, then
// private; project_analyze, which sends a project's data, takes only
// no-retention or local models, so private serves it (general too when
// it runs on this machine). Without the private model, general serves
// every task.
func aiRouting(private bool) *ai.RoutingPolicy {
	every := []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention, ai.PrivacyLocal}
	p := &ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{}}
	for _, t := range ai.Tasks() {
		r := ai.TaskRoute{Primary: aiGeneral, Privacy: every, Strategy: ai.StrategyPrimary}
		if private {
			r.Fallbacks = []string{aiPrivate}
			if t == ai.TaskProjectAnalyze {
				r = ai.TaskRoute{Primary: aiPrivate, Fallbacks: []string{aiGeneral},
					Privacy: []ai.PrivacyClass{ai.PrivacyNoRetention, ai.PrivacyLocal}, Strategy: ai.StrategyPrimary}
			}
		}
		p.Tasks[t] = r
	}
	return p
}

// aiUpstreamURL checks -ai-openai-url: an https URL, or plain http to a
// loopback address with its port (a server on this machine: Ollama,
// vLLM, llama.cpp, a LiteLLM proxy), never user information. It reports
// whether the URL is loopback, which the AI URL guard must then let
// through; any other private address stays refused by the guard.
func aiUpstreamURL(raw string) (*url.URL, bool, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, false, errors.New("-ai-openai-url must be an http(s) URL with a host and no user information, such as https://api.openai.com/v1")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Scheme == "https" {
		_, err := urlguard.LoopbackOf(u.String())
		return u, err == nil, nil
	}
	if u.Hostname() == "localhost" {
		return nil, false, errors.New("-ai-openai-url: name the loopback address, not localhost (http://127.0.0.1:11434/v1)")
	}
	if _, err := urlguard.LoopbackOf(u.String()); err != nil {
		return nil, false, errors.New("-ai-openai-url: plain http only to a loopback address with its port " +
			"(http://127.0.0.1:11434/v1); any other server must be https")
	}
	return u, true, nil
}

// allowSim lets the AI URL guard through to a simulator's address.
func (s *aiSetup) allowSim(simURL string) error {
	ap, err := urlguard.LoopbackOf(simURL)
	if err != nil {
		return err
	}
	s.allow = append(s.allow, ap)
	return nil
}

// wire sets the test environment's AI configuration of cfg: providers,
// models, routing and keys, and the loopback addresses. The live side is
// never touched.
func (s *aiSetup) wire(cfg *platform.Config) {
	if s == nil {
		return
	}
	cfg.AI.Test = s.env
	cfg.AI.TestKeys = ai.ProviderKeys{}
	for ref, k := range s.keys {
		cfg.AI.TestKeys[ref] = k
	}
	cfg.AllowLoopback = append(cfg.AllowLoopback, s.allow...)
}

// services are the AI simulators for the map, each with its control key
// (never its API key, which only the platform holds, sealed).
func (s *aiSetup) services() []simService {
	if s == nil {
		return nil
	}
	var out []simService
	if s.openai != nil {
		out = append(out, simService{Name: "openai", URL: s.openai.URL(), Key: s.openai.ControlKey(),
			About: "OpenAI-compatible Chat Completions (model sim-gpt): the test environment's AI provider openai"})
	}
	if s.anthropic != nil {
		out = append(out, simService{Name: "anthropic", URL: s.anthropic.URL(), Key: s.anthropic.ControlKey(),
			About: "Anthropic Messages (model sim-claude): the test environment's AI provider anthropic"})
	}
	return out
}

// close stops the simulators that run. It may be called more than once.
func (s *aiSetup) close() {
	if s == nil {
		return
	}
	if s.openai != nil {
		s.openai.Close()
	}
	if s.anthropic != nil {
		s.anthropic.Close()
	}
}
