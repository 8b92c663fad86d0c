package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pb33f/jsonschema/v6"
	"github.com/pb33f/jsonschema/v6/kind"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// The tools' ids.
const (
	// ProjectRead reads one project the caller may read.
	ProjectRead = "project.read"
	// ProjectCreateDraft proposes a new project of the caller's own.
	ProjectCreateDraft = "project.create_draft"
	// GenerationStart proposes a music generation.
	GenerationStart = "generation.start"
)

// The operation ids of the direct routes the tools stand for: a tool call
// is authorized as a call of its route (Declaration.Route).
const (
	RouteGetProject    = "getProject"
	RouteCreateProject = "createProject"
	RouteGenerateMusic = "generateMusic"
)

// Declaration declares one platform action a model may propose (spec, AI
// control plane, Tool declaration).
type Declaration struct {
	// ID is the tool's id, domain.action.
	ID string
	// Name is the function name a model calls it by ([a-zA-Z0-9_-], as
	// both wires require): the id with its dots as underscores.
	Name string
	// Domain is the domain that owns the action.
	Domain string
	// Description tells the model, and people, what the tool does.
	Description string
	// RequiredPermissions are the permissions the tool's direct route
	// needs. The route's declared access policy is what is enforced; the
	// host refuses to start when the two disagree.
	RequiredPermissions []access.Permission
	// Scope is the API key scope that admits a key to the direct route.
	Scope string
	// Mutating tools change state: they never run when called, they make
	// a draft artifact.
	Mutating bool
	// RequiresConfirmation tools apply only on their caller's explicit
	// confirmation of the draft.
	RequiresConfirmation bool
	// Parameters is the JSON Schema (2020-12) of the arguments object.
	Parameters json.RawMessage
	// Route is the operation id of the direct route the tool stands for.
	Route string
}

// Function returns the declaration as a model sees it.
func (d Declaration) Function() ai.Tool {
	return ai.Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters}
}

// Catalog is the platform's tool declarations with their compiled
// schemas. It is immutable and safe for concurrent use.
type Catalog struct {
	decls   []Declaration
	schemas map[string]*jsonschema.Schema
}

// declarations are every tool the platform declares, in catalog order.
func declarations() []Declaration {
	return []Declaration{
		{ID: ProjectRead, Domain: "project", Route: RouteGetProject,
			Description:         "Reads one project the user may read: its id, title, type, description, visibility and status.",
			RequiredPermissions: []access.Permission{access.ProjectRead}, Scope: access.ScopeRead,
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"projectId":{"type":"string","minLength":1,"maxLength":64,"description":"The project's id (prj_...)."}},` +
				`"required":["projectId"],"additionalProperties":false}`)},
		{ID: ProjectCreateDraft, Domain: "project", Route: RouteCreateProject, Mutating: true, RequiresConfirmation: true,
			Description:         "Proposes a new project owned by the user, in DRAFT. Nothing is created until the user confirms the proposal.",
			RequiredPermissions: []access.Permission{access.ProjectUpdate}, Scope: access.ScopeProjectsWrite,
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"title":{"type":"string","minLength":1,"maxLength":200,"description":"The project's title."},` +
				`"type":{"type":"string","enum":["music_video","album","single","remix","soundtrack","other"],"description":"What the project makes."},` +
				`"description":{"type":"string","maxLength":5000,"description":"The project's description."},` +
				`"visibility":{"type":"string","enum":["workspace","public"],"description":"workspace (the default) or public."}},` +
				`"required":["title","type"],"additionalProperties":false}`)},
		{ID: GenerationStart, Domain: "generation", Route: RouteGenerateMusic, Mutating: true, RequiresConfirmation: true,
			Description:         "Proposes a music generation, which reserves credits when it starts. Nothing starts until the user confirms the proposal.",
			RequiredPermissions: []access.Permission{access.TrackGenerate}, Scope: access.ScopeMusicGenerate,
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"prompt":{"type":"string","minLength":1,"maxLength":5000,"description":"What the music should be."},` +
				`"instrumental":{"type":"boolean","description":"Music without vocals."},` +
				`"model":{"type":"string","enum":["v3.5","v4","v4.5","v4.5-plus","v4.5-all","v5"],"description":"The platform's music model; v5 when absent."}},` +
				`"required":["prompt"],"additionalProperties":false}`)},
	}
}

// NewCatalog returns the catalog of the tools with these ids, in catalog
// order (every tool when ids is empty), with their schemas compiled. An
// unknown id, or a schema that does not compile, is an error.
func NewCatalog(ids ...string) (*Catalog, error) {
	all := declarations()
	c := &Catalog{schemas: map[string]*jsonschema.Schema{}}
	for _, id := range ids {
		if !slices.ContainsFunc(all, func(d Declaration) bool { return d.ID == id }) {
			return nil, fmt.Errorf("tool: unknown tool %q", id)
		}
	}
	for _, d := range all {
		if len(ids) > 0 && !slices.Contains(ids, d.ID) {
			continue
		}
		d.Name = strings.ReplaceAll(d.ID, ".", "_")
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.Parameters))
		if err != nil {
			return nil, fmt.Errorf("tool: %s: schema: %w", d.ID, err)
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		url := "urn:platform:tool:" + d.ID
		if err := comp.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("tool: %s: schema: %w", d.ID, err)
		}
		sch, err := comp.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("tool: %s: schema: %w", d.ID, err)
		}
		c.decls = append(c.decls, d)
		c.schemas[d.ID] = sch
	}
	return c, nil
}

// Declarations returns the catalog's declarations, in catalog order.
func (c *Catalog) Declarations() []Declaration { return slices.Clone(c.decls) }

// Functions returns the declarations as a model sees them, for a
// completion request's tools.
func (c *Catalog) Functions() []ai.Tool {
	out := make([]ai.Tool, len(c.decls))
	for i, d := range c.decls {
		out[i] = d.Function()
	}
	return out
}

// Lookup returns the declaration a model's call names: by its function
// name exactly, or its id exactly. Nothing else matches.
func (c *Catalog) Lookup(name string) (Declaration, bool) {
	i := slices.IndexFunc(c.decls, func(d Declaration) bool { return d.Name == name || d.ID == name })
	if i < 0 {
		return Declaration{}, false
	}
	return c.decls[i], true
}

// Validate returns the declaration a model's call names and its
// arguments once they satisfy the declared schema (extra fields are
// refused). INVALID_INPUT otherwise: details.field "name" with
// details.reason unknown_tool for a name the catalog does not declare;
// for arguments, details.field the argument's path ("" for the whole
// object) and details.reason the schema keyword that failed.
func (c *Catalog) Validate(call ai.ToolCall) (Declaration, json.RawMessage, error) {
	const op = "tool.Validate"
	d, ok := c.Lookup(call.Name)
	if !ok {
		return Declaration{}, nil, fault.Invalid(op, "name", "The model called a tool the platform does not declare.").With("reason", "unknown_tool")
	}
	args := call.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return d, nil, fault.Invalid(op, "", "The tool's arguments are not one JSON value.").With("reason", "malformed")
	}
	if err := c.schemas[d.ID].Validate(v); err != nil {
		return d, nil, schemaError(op, err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return d, nil, fault.Wrap(op, err)
	}
	return d, canon, nil
}

// schemaError turns a validation failure into INVALID_INPUT naming the
// first failing argument and the keyword that refused it.
func schemaError(op string, err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fault.Invalid(op, "", "The tool's arguments do not match its schema.")
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	field := strings.Join(ve.InstanceLocation, ".")
	reason := "schema"
	if kp := ve.ErrorKind.KeywordPath(); len(kp) > 0 {
		reason = kp[len(kp)-1]
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			field = join(field, k.Properties[0])
		}
	case *kind.Required:
		if len(k.Missing) > 0 {
			field = join(field, k.Missing[0])
		}
	}
	return fault.Invalid(op, field, "The tool's arguments do not match its schema.").With("reason", reason)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
