package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pb33f/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schema is the subset of JSON Schema (draft 2020-12) the tasks' answers
// use: every object closed (additionalProperties false) with every
// property required, strings and arrays bounded, integers bounded, enums of
// strings. The subset is the one OpenAI's strict structured outputs
// accept, so a provider may enforce it as it is.
type schema struct {
	Type                 string             `json:"type"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Minimum              *int               `json:"minimum,omitempty"`
	Maximum              *int               `json:"maximum,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
}

// prop is one property of an object schema, in the order it is required.
type prop struct {
	name string
	s    *schema
}

// object is a closed object schema whose properties are all required.
func object(desc string, props ...prop) *schema {
	closed := false
	s := &schema{Type: "object", Description: desc, Properties: map[string]*schema{}, Required: []string{}, AdditionalProperties: &closed}
	for _, p := range props {
		s.Properties[p.name] = p.s
		s.Required = append(s.Required, p.name)
	}
	return s
}

// str is a string of min to max characters.
func str(desc string, minLen, maxLen int) *schema {
	return &schema{Type: "string", Description: desc, MinLength: &minLen, MaxLength: &maxLen}
}

// enum is a string from values.
func enum[S ~string](desc string, values []S) *schema {
	s := &schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

// integer is a whole number from minV to maxV.
func integer(desc string, minV, maxV int) *schema {
	return &schema{Type: "integer", Description: desc, Minimum: &minV, Maximum: &maxV}
}

// array is a list of minN to maxN items.
func array(desc string, items *schema, minN, maxN int) *schema {
	return &schema{Type: "array", Description: desc, Items: items, MinItems: &minN, MaxItems: &maxN}
}

// compiled is a task's answer schema: the JSON sent to the model and the
// validator built from that same JSON, so what is asked and what is
// checked cannot drift apart.
type compiled struct {
	raw json.RawMessage
	v   *jsonschema.Schema
}

// noLoader refuses every URL: a task's schema is self-contained, and
// compiling it never reads a file or the network.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("schema %s: no loading", url) }

// compile marshals s and compiles the result as draft 2020-12.
func compile(name string, s *schema) (compiled, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return compiled{}, fmt.Errorf("marshal %s schema: %w", name, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return compiled{}, fmt.Errorf("read %s schema: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	url := "urn:platform:ai:task:" + name
	if err := c.AddResource(url, doc); err != nil {
		return compiled{}, fmt.Errorf("add %s schema: %w", name, err)
	}
	v, err := c.Compile(url)
	if err != nil {
		return compiled{}, fmt.Errorf("compile %s schema: %w", name, err)
	}
	return compiled{raw: raw, v: v}, nil
}

// MaxAnswerBytes bounds a model's answer: a longer one is refused unread.
const MaxAnswerBytes = 64 << 10

// maxProblems bounds the problems reported for one answer, and
// maxProblemLen each problem's length, so that a correction stays small.
const (
	maxProblems   = 10
	maxProblemLen = 200
)

// check parses content as one JSON object, trims every string in it,
// refuses control characters, validates it against c and decodes it
// strictly into out. It returns what is wrong with the answer, nothing
// when out holds it.
func (c compiled) check(content string, out any) []string {
	body := unfence(content)
	if len(body) > MaxAnswerBytes {
		return []string{fmt.Sprintf("the answer is longer than %d bytes", MaxAnswerBytes)}
	}
	if body == "" {
		return []string{"the answer is empty; it must be one JSON object"}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	if err != nil {
		return []string{"the answer is not one JSON object: " + clip(err.Error())}
	}
	if _, ok := doc.(map[string]any); !ok {
		return []string{"the answer must be a JSON object"}
	}
	var problems []string
	doc = tidy(doc, "", &problems)
	if len(problems) > 0 {
		return bound(problems)
	}
	if err := c.v.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return []string{"the answer could not be validated: " + clip(err.Error())}
		}
		leaves(ve, message.NewPrinter(language.English), &problems)
		return bound(problems)
	}
	tidied, err := json.Marshal(doc)
	if err != nil {
		return []string{"the answer could not be read: " + clip(err.Error())}
	}
	dec := json.NewDecoder(bytes.NewReader(tidied))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return []string{"the answer does not match the schema: " + clip(err.Error())}
	}
	return nil
}

// unfence returns content without surrounding white space and without one
// enclosing Markdown code fence (```json ... ```), the only framing
// tolerated around the object: models without a JSON mode often add it.
func unfence(content string) string {
	s := strings.TrimSpace(content)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	inner := s[3 : len(s)-3]
	nl := strings.IndexByte(inner, '\n')
	if nl < 0 {
		return s
	}
	if tag := strings.TrimSpace(inner[:nl]); tag != "" && !strings.EqualFold(tag, "json") {
		return s
	}
	return strings.TrimSpace(inner[nl+1:])
}

// tidy trims every string of v and reports, under path, strings holding a
// control character other than tab, line feed and carriage return.
func tidy(v any, path string, problems *[]string) any {
	switch x := v.(type) {
	case string:
		if strings.ContainsFunc(x, func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' }) {
			*problems = append(*problems, at(path)+": text must not hold control characters")
		}
		return strings.TrimSpace(x)
	case map[string]any:
		for k, e := range x {
			x[k] = tidy(e, path+"/"+k, problems)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = tidy(e, fmt.Sprintf("%s/%d", path, i), problems)
		}
		return x
	}
	return v
}

// leaves appends the innermost failures of e, each as "path: message".
func leaves(e *jsonschema.ValidationError, p *message.Printer, out *[]string) {
	if len(e.Causes) == 0 {
		path := ""
		for _, t := range e.InstanceLocation {
			path += "/" + t
		}
		*out = append(*out, at(path)+": "+e.ErrorKind.LocalizedString(p))
		return
	}
	for _, c := range e.Causes {
		leaves(c, p, out)
	}
}

// at names a JSON pointer for a problem ("/" for the whole answer).
func at(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

// clip cuts s to maxProblemLen bytes on a rune boundary.
func clip(s string) string {
	if len(s) <= maxProblemLen {
		return s
	}
	cut := maxProblemLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// bound keeps the first maxProblems problems, each clipped.
func bound(problems []string) []string {
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems:maxProblems], fmt.Sprintf("and %d more problems", len(problems)-maxProblems))
	}
	for i, p := range problems {
		problems[i] = clip(p)
	}
	return problems
}
