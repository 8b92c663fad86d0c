package transport

import (
	"reflect"
	"slices"
	"strings"
	"time"
)

// JSONField is one field that encoding/json encodes for a struct type: the
// strict decoder (decode.go) and the OpenAPI document agree on it.
type JSONField struct {
	// Name is the JSON key.
	Name string
	// Type is the field's Go type.
	Type reflect.Type
	// Owner is the struct type that declares the field.
	Owner reflect.Type
	// GoName is the Go field's name.
	GoName string
	// OmitEmpty is set by the omitempty or omitzero option.
	OmitEmpty bool
	// Quoted is set by the ",string" option on a scalar.
	Quoted bool
	// Tag is the field's struct tag.
	Tag reflect.StructTag
}

// JSONFields returns the fields encoding/json encodes for struct type t,
// with embedded structs' fields promoted. Among fields of one name the
// shallowest wins, a tagged one breaking a tie; a remaining tie drops the name.
func JSONFields(t reflect.Type) []JSONField {
	type cand struct {
		JSONField
		depth  int
		tagged bool
	}
	var all []cand
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, depth+1, seen)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			f := cand{depth: depth, tagged: name != ""}
			if name == "" {
				name = sf.Name
			}
			f.JSONField = JSONField{Name: name, Type: sf.Type, Owner: t, GoName: sf.Name, Tag: sf.Tag}
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty", "omitzero":
					f.OmitEmpty = true
				case "string":
					f.Quoted = isScalar(sf.Type)
				}
			}
			all = append(all, f)
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	var out []JSONField
	for i, f := range all {
		if slices.IndexFunc(all, func(c cand) bool { return c.Name == f.Name }) != i {
			continue // decided at the name's first occurrence
		}
		var best []cand
		for _, c := range all {
			if c.Name != f.Name {
				continue
			}
			switch {
			case len(best) == 0 || c.depth < best[0].depth:
				best = []cand{c}
			case c.depth == best[0].depth:
				best = append(best, c)
			}
		}
		if tagged := slices.DeleteFunc(slices.Clone(best), func(c cand) bool { return !c.tagged }); len(best) > 1 && len(tagged) == 1 {
			best = tagged
		}
		if len(best) == 1 {
			out = append(out, best[0].JSONField)
		}
	}
	return out
}

// FieldByJSONName finds the field a JSON key sets. Keys match exactly (case
// sensitive), so the strict decoder agrees with the published schema.
func FieldByJSONName(t reflect.Type, key string) (JSONField, bool) {
	for _, f := range JSONFields(t) {
		if f.Name == key {
			return f, true
		}
	}
	return JSONField{}, false
}

// isScalar reports whether ",string" applies to t (strings, numbers, bools).
func isScalar(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

var timeType = reflect.TypeFor[time.Time]()
