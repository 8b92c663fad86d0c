package ai

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Capability is something a model can do that a task may need.
type Capability string

// The capabilities.
const (
	// CapChat: the model answers a conversation (every task needs it).
	CapChat Capability = "chat"
	// CapJSONOutput: the model can be held to a JSON answer (a
	// response_format of json_object or json_schema).
	CapJSONOutput Capability = "json_output"
	// CapTools: the model proposes tool calls.
	CapTools Capability = "tools"
	// CapStreaming: the model's answer can be streamed.
	CapStreaming Capability = "streaming"
)

// Capabilities lists every capability, in a stable order.
func Capabilities() []Capability { return []Capability{CapChat, CapJSONOutput, CapTools, CapStreaming} }

// Valid reports whether c is a known capability.
func (c Capability) Valid() bool { return slices.Contains(Capabilities(), c) }

// PrivacyClass says what happens to the data a model is sent. Classes
// are ordered from least to most private; a requirement of one class is
// met by it and by every more private one.
type PrivacyClass string

// The privacy classes, least private first.
const (
	// PrivacyStandard: the provider may keep requests under its ordinary
	// terms (abuse monitoring, retention windows).
	PrivacyStandard PrivacyClass = "standard"
	// PrivacyNoRetention: the provider account is bound to keep nothing
	// (a zero-data-retention agreement or endpoint).
	PrivacyNoRetention PrivacyClass = "no_retention"
	// PrivacyLocal: the model runs on infrastructure the platform
	// operates; requests never leave it.
	PrivacyLocal PrivacyClass = "local"
)

// PrivacyClasses lists the privacy classes, least private first.
func PrivacyClasses() []PrivacyClass {
	return []PrivacyClass{PrivacyStandard, PrivacyNoRetention, PrivacyLocal}
}

// Valid reports whether c is a known privacy class.
func (c PrivacyClass) Valid() bool { return slices.Contains(PrivacyClasses(), c) }

// Satisfies reports whether c meets requirement req: it is req or more
// private. An empty requirement is met by every class.
func (c PrivacyClass) Satisfies(req PrivacyClass) bool {
	if req == "" {
		return c.Valid()
	}
	return c.Valid() && req.Valid() && slices.Index(PrivacyClasses(), c) >= slices.Index(PrivacyClasses(), req)
}

// ProviderKind is the wire a provider speaks.
type ProviderKind string

// The provider kinds.
const (
	// KindOpenAICompatible speaks OpenAI-compatible Chat Completions
	// (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, a LiteLLM proxy).
	KindOpenAICompatible ProviderKind = "openai_compatible"
	// KindAnthropic speaks the Anthropic Messages API.
	KindAnthropic ProviderKind = "anthropic"
)

// ProviderKinds lists the provider kinds.
func ProviderKinds() []ProviderKind { return []ProviderKind{KindOpenAICompatible, KindAnthropic} }

// Valid reports whether k is a known provider kind.
func (k ProviderKind) Valid() bool { return slices.Contains(ProviderKinds(), k) }

// idPattern is the form of provider and model ids: lower-case letters,
// digits and . _ : -, starting with a letter or digit. A slash is not
// allowed, since an id is one path segment of the routes that name it
// (an upstream name such as OpenRouter's "openai/gpt-4o" keeps its slash:
// it is the model's Upstream, not its id).
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._:-]{0,99}$`)

// ValidID reports whether s is a well-formed provider or model id.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// ProviderConfig is one upstream provider of an environment, from the
// host's configuration. Its key is never here: KeyRef only names it, and
// no view, record or log of this package carries either.
type ProviderConfig struct {
	// ID names the provider within the environment ("openai", "local").
	ID string
	// Kind is the wire it speaks.
	Kind ProviderKind
	// DisplayName is how people see it.
	DisplayName string
	// BaseURL is the provider's API root (https://api.openai.com/v1). It
	// is shown to administrators by host only: never a path, query or
	// user information, which may carry credentials.
	BaseURL string
	// KeyRef names the provider's key in the platform's sealed key
	// configuration (the adapter that calls the provider holds the key,
	// sealed at rest); "" means no key is configured.
	KeyRef string
	// Keyless marks a provider that takes no key (a local server): it is
	// configured with a base URL alone.
	Keyless bool
}

// Configured reports whether the provider can be called: a base URL and,
// unless it is keyless, a key reference.
func (p ProviderConfig) Configured() bool {
	return p.BaseURL != "" && (p.Keyless || p.KeyRef != "")
}

// Host returns the host (and port) of the base URL, "" when there is none.
func (p ProviderConfig) Host() string {
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// validate checks the provider's configuration.
func (p ProviderConfig) validate() error {
	if !ValidID(p.ID) {
		return fmt.Errorf("provider id %q: want lower-case letters, digits and . _ : -", p.ID)
	}
	if !p.Kind.Valid() {
		return fmt.Errorf("provider %s: kind %q is not one of %v", p.ID, p.Kind, ProviderKinds())
	}
	if strings.TrimSpace(p.DisplayName) == "" {
		return fmt.Errorf("provider %s: a display name is required", p.ID)
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return fmt.Errorf("provider %s: base URL must be an http(s) URL without user information", p.ID)
		}
	}
	return nil
}

// MaxModels bounds the models of one environment.
const MaxModels = 200

// MaxContextWindow bounds a model's context window, in units.
const MaxContextWindow = 100_000_000

// RegistryModel is one model of an environment's registry: what the
// platform offers (a Model is what a provider says it serves).
// Configuration seeds it (every field but the record's bookkeeping); an
// administrator may change Enabled and the prices (ModelChange), and that
// change survives restarts.
type RegistryModel struct {
	// Environment is the registry the model belongs to.
	Environment access.Environment
	// ID names the model on the platform ("gpt-4o-mini").
	ID string
	// ProviderID is the provider that serves it.
	ProviderID string
	// Upstream is the model's name at the provider ("gpt-4o-mini-2024-07-18").
	Upstream string
	// Capabilities are what it can do, in Capabilities order.
	Capabilities []Capability
	// ContextWindow is the most units (tokens) a request and its answer
	// may hold together.
	ContextWindow int64
	// Privacy is what happens to the data it is sent.
	Privacy PrivacyClass
	// InputPrice and OutputPrice are the cost of one input and one output
	// unit (token) in US dollars.
	InputPrice, OutputPrice Price
	// Enabled is false when an administrator (or the configuration) took
	// the model out of service.
	Enabled bool
	// Retired is true while the environment's configuration no longer
	// lists the model: it is kept (with an administrator's changes) but
	// never routed to.
	Retired bool
	// AdminChanged is true once an administrator changed the model: from
	// then on configuration no longer sets Enabled or the prices.
	AdminChanged bool
	// Version counts the record's writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound the record's life so far.
	CreatedAt, UpdatedAt time.Time
	// UpdatedBy names who wrote it last: a principal's stable id, or
	// Publisher for configuration.
	UpdatedBy string
}

// Has reports whether the model has capability c.
func (m RegistryModel) Has(c Capability) bool { return slices.Contains(m.Capabilities, c) }

// Cost returns the cost of in input and out output units at the model's
// prices, exactly.
func (m RegistryModel) Cost(in, out int64) (Price, error) {
	return Cost(m.InputPrice, in, m.OutputPrice, out)
}

// normalize returns the model with its capabilities deduplicated and in
// Capabilities order.
func (m RegistryModel) normalize() RegistryModel {
	var caps []Capability
	for _, c := range Capabilities() {
		if slices.Contains(m.Capabilities, c) {
			caps = append(caps, c)
		}
	}
	m.Capabilities = caps
	return m
}

// validate checks a configured model against its environment's
// providers.
func (m RegistryModel) validate(providers []ProviderConfig) error {
	if !ValidID(m.ID) {
		return fmt.Errorf("model id %q: want lower-case letters, digits and . _ : -", m.ID)
	}
	if !slices.ContainsFunc(providers, func(p ProviderConfig) bool { return p.ID == m.ProviderID }) {
		return fmt.Errorf("model %s: provider %q is not configured in its environment", m.ID, m.ProviderID)
	}
	if strings.TrimSpace(m.Upstream) == "" || len(m.Upstream) > 200 {
		return fmt.Errorf("model %s: the upstream model name is required (at most 200 bytes)", m.ID)
	}
	for _, c := range m.Capabilities {
		if !c.Valid() {
			return fmt.Errorf("model %s: capability %q is not one of %v", m.ID, c, Capabilities())
		}
	}
	if !m.Has(CapChat) {
		return fmt.Errorf("model %s: every model needs the chat capability", m.ID)
	}
	if m.ContextWindow < 1 || m.ContextWindow > MaxContextWindow {
		return fmt.Errorf("model %s: context window %d is outside 1..%d", m.ID, m.ContextWindow, MaxContextWindow)
	}
	if !m.Privacy.Valid() {
		return fmt.Errorf("model %s: privacy class %q is not one of %v", m.ID, m.Privacy, PrivacyClasses())
	}
	for _, p := range []Price{m.InputPrice, m.OutputPrice} {
		if _, err := ParsePrice(string(p)); err != nil {
			return fmt.Errorf("model %s: price %q: %w", m.ID, p, err)
		}
	}
	return nil
}

// Registry is one environment's models and providers as resolution and
// the views read them: the models from the store (an administrator's
// changes included), the providers from configuration.
type Registry struct {
	// Environment is the registry's environment.
	Environment access.Environment
	// Providers are the environment's providers, in id order.
	Providers []ProviderConfig
	// Models are the environment's models, in id order, retired ones
	// included.
	Models []RegistryModel
}

// Model returns model id, and whether the registry holds it.
func (r Registry) Model(id string) (RegistryModel, bool) {
	i := slices.IndexFunc(r.Models, func(m RegistryModel) bool { return m.ID == id })
	if i < 0 {
		return RegistryModel{}, false
	}
	return r.Models[i], true
}

// Provider returns provider id, and whether the registry holds it.
func (r Registry) Provider(id string) (ProviderConfig, bool) {
	i := slices.IndexFunc(r.Providers, func(p ProviderConfig) bool { return p.ID == id })
	if i < 0 {
		return ProviderConfig{}, false
	}
	return r.Providers[i], true
}

// Available reports whether model m can be routed to at all: listed by
// the configuration, enabled, and served by a configured provider.
func (r Registry) Available(m RegistryModel) bool {
	p, ok := r.Provider(m.ProviderID)
	return ok && p.Configured() && m.Enabled && !m.Retired
}

// ModelChange is what an administrator may change of a model. Nil
// fields stay as they are; at least one must be set.
type ModelChange struct {
	// Enabled takes the model in or out of service.
	Enabled *bool
	// InputPrice and OutputPrice set the cost of one unit, as decimal
	// strings in US dollars.
	InputPrice, OutputPrice *string
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// errNoModel is the NOT_FOUND of a model an environment's registry does
// not list.
func errNoModel(op string) error {
	return fault.E(op, fault.NotFound, "No such model in this environment.")
}
