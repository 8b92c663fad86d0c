package transport

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
)

// DefaultBodyLimit bounds request bodies of routes that set no BodyLimit.
const DefaultBodyLimit = 1 << 20

// Decode decodes the request body into v strictly: the Content-Type must be
// application/json (parameters such as charset are allowed), the body must be
// one JSON value with nothing but white space after it, and every field must
// be known to v's type. Failures are INVALID_INPUT with details.field set to
// the JSON path of the offending field ("limits.ratePerMinute",
// "items[2].name"; "" for the body itself) or, for syntax errors,
// details.offset; a wrong content type is UNSUPPORTED_MEDIA_TYPE. A string
// holding a control character the platform refuses (see controlPath) is
// INVALID_INPUT with details.field its path and details.reason
// "control_character".
func (c *Call[T]) Decode(v any) error {
	const op = "transport.Decode"
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fault.Wrap(op, fmt.Errorf("decode target must be a non-nil pointer, got %T", v))
	}
	if err := checkJSONContentType(c.Request); err != nil {
		return err
	}
	body := bytes.TrimSpace(c.body)
	if len(body) == 0 {
		return fault.Invalid(op, "", "The request body is empty; a JSON value is required.")
	}
	if err := checkSyntax(body); err != nil {
		return err
	}
	if field, bad := controlPath(body); bad {
		return fault.Invalid(op, field, fmt.Sprintf("Field %q holds a control character; only tab, line feed and carriage return "+
			"are allowed in text.", pathName(field))).With("reason", ReasonControlCharacter)
	}
	if field, msg, bad := c.fields.checkShape(body, rv.Type().Elem(), ""); bad {
		return fault.Invalid(op, field, msg)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeFailure(err)
	}
	return nil
}

// ReasonControlCharacter is details.reason of INVALID_INPUT for a string,
// path value or query parameter holding a control character.
const ReasonControlCharacter = "control_character"

// controlPath returns the JSON path of the first string of body that holds
// a refused control character (the package doc's Control characters): a
// string value's own path, or for an object key the object's path. body is
// well-formed JSON (checkSyntax).
func controlPath(body []byte) (string, bool) {
	if bytes.IndexByte(body, '\\') < 0 {
		return "", false // without escapes a JSON string holds no control
	}
	type frame struct {
		object  bool
		wantKey bool
		key     string
		index   int
	}
	var stack []*frame
	path := func(stack []*frame) string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // io.EOF; a syntax error was reported before
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if str, ok := tok.(string); ok && top != nil && top.object && top.wantKey {
			if strings.IndexFunc(str, func(r rune) bool { return r < 0x20 }) >= 0 {
				return path(stack[:len(stack)-1]), true // the object holding the key
			}
			top.key, top.wantKey = str, false
			continue
		}
		// tok begins or ends a value.
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].wantKey = true
			}
			continue
		}
		if top != nil && !top.object {
			top.index++
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{object: d == '{', wantKey: d == '{', index: -1})
			continue
		}
		if str, ok := tok.(string); ok && strings.IndexFunc(str, textControl) >= 0 {
			return path(stack), true
		}
		if top != nil && top.object {
			top.wantKey = true
		}
	}
}

// textControl reports the characters refused in a JSON string value: the C0
// controls but tab, line feed and carriage return.
func textControl(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }

// checkRequestText refuses path values and the route's query parameters
// holding a control character or invalid UTF-8: INVALID_INPUT with
// details.field the parameter's name and details.reason. Query parameters
// the route does not declare are ignored, as its handler ignores them.
func checkRequestText[T Tx](r *http.Request, rt Route[T]) error {
	const op = "transport.checkRequestText"
	bad := func(s string) bool { return !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 }
	for _, name := range pathNames(rt.Pattern) {
		if bad(r.PathValue(name)) {
			return fault.Invalid(op, name, fmt.Sprintf("Path parameter %q holds a control character or invalid UTF-8.", name)).
				With("reason", ReasonControlCharacter)
		}
	}
	if r.URL.RawQuery == "" || len(rt.Query) == 0 {
		return nil
	}
	q := r.URL.Query()
	for _, p := range rt.Query {
		if slices.ContainsFunc(q[p.Name], bad) {
			return fault.Invalid(op, p.Name, fmt.Sprintf("Query parameter %q holds a control character or invalid UTF-8.", p.Name)).
				With("reason", ReasonControlCharacter)
		}
	}
	return nil
}

// pathNames lists the wildcard names of a route pattern, in order.
func pathNames(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"), "...")
			if name != "$" {
				out = append(out, name)
			}
		}
	}
	return out
}

// setBody stores the request body, already bounded by the route's limit.
func (c *Call[T]) setBody(b []byte) { c.body = b }

// checkJSONContentType requires an application/json body.
func checkJSONContentType(r *http.Request) error {
	var ct string
	if r != nil {
		ct = r.Header.Get("Content-Type")
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return fault.E("transport.Decode", fault.UnsupportedMediaType, "The request body must be sent as Content-Type: application/json.").
			With("contentType", ct)
	}
	return nil
}

// checkSyntax requires exactly one well-formed JSON value.
func checkSyntax(body []byte) error {
	const op = "transport.Decode"
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return fault.E(op, fault.InvalidInput, "The request body is not valid JSON: "+se.Error()+".").With("offset", se.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return fault.E(op, fault.InvalidInput, "The request body ends before the JSON value is complete.").With("offset", int64(len(body)))
		default:
			return fault.E(op, fault.InvalidInput, "The request body is not valid JSON.").With("offset", dec.InputOffset())
		}
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(body[off:])) > 0 {
		return fault.E(op, fault.InvalidInput, "The request body must hold a single JSON value; unexpected data follows it.").
			With("offset", off)
	}
	return nil
}

// decodeFailure maps an encoding/json error that checkShape did not foresee
// (a custom unmarshaler's error, an unusual field) to INVALID_INPUT.
func decodeFailure(err error) error {
	const op = "transport.Decode"
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fault.Invalid(op, te.Field, fmt.Sprintf("Field %q must be %s.", te.Field, kindPhrase(te.Type))).With("cause", "type")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		return fault.Invalid(op, name, fmt.Sprintf("Unknown field %q.", name))
	}
	return fault.Invalid(op, "", "The request body could not be decoded: "+err.Error()+".")
}

// fieldIndex memoizes, per Go type, the JSON fields a route's request
// bodies can set: the shape check resolves every key of every body, and
// walking a type's fields by reflection each time was a measurable share
// of a request's CPU. Gateway.Serve makes one per route; a nil index
// resolves keys without memoizing.
type fieldIndex struct {
	m sync.Map // reflect.Type -> map[string]JSONField
}

// field finds the field of t a JSON key sets (FieldByJSONName).
func (x *fieldIndex) field(t reflect.Type, key string) (JSONField, bool) {
	if x == nil {
		return FieldByJSONName(t, key)
	}
	v, ok := x.m.Load(t)
	if !ok {
		fs := JSONFields(t)
		byName := make(map[string]JSONField, len(fs))
		for _, f := range fs {
			if _, seen := byName[f.Name]; !seen {
				byName[f.Name] = f // the first, as FieldByJSONName finds it
			}
		}
		v, _ = x.m.LoadOrStore(t, byName)
	}
	f, ok := v.(map[string]JSONField)[key]
	return f, ok
}

// checkShape walks the JSON value data against the Go type t and returns the
// path of the first unknown field or type mismatch, in document order, with
// a client-facing message. encoding/json names only the key of an unknown
// field; this walk names the whole path.
func (x *fieldIndex) checkShape(data []byte, t reflect.Type, path string) (string, string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	kind := jsonKind(data)
	if kind == 'n' {
		return "", "", false
	}
	if opaque(t) || textual(t) {
		return checkOpaque(data, t, path)
	}
	switch t.Kind() {
	case reflect.Interface:
		return "", "", false
	case reflect.Struct:
		if kind != 'o' {
			return path, fmt.Sprintf("Field %q must be an object.", pathName(path)), true
		}
		return x.checkObject(data, path, func(key string) (reflect.Type, bool) {
			f, ok := x.field(t, key)
			if !ok {
				return nil, false
			}
			if f.Quoted {
				return nil, true // ",string": encoding/json checks it
			}
			return f.Type, true
		})
	case reflect.Map:
		if kind != 'o' {
			return path, fmt.Sprintf("Field %q must be an object.", pathName(path)), true
		}
		return x.checkObject(data, path, func(string) (reflect.Type, bool) { return t.Elem(), true })
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			if kind != 's' {
				return path, fmt.Sprintf("Field %q must be a base64 string.", pathName(path)), true
			}
			return "", "", false
		}
		if kind != 'a' {
			return path, fmt.Sprintf("Field %q must be an array.", pathName(path)), true
		}
		return x.checkArray(data, t.Elem(), path)
	}
	return checkScalar(data, kind, t, path)
}

// checkOpaque decodes data into a fresh value of a type that decodes itself
// (time.Time, json.RawMessage, custom unmarshalers), since the walk cannot
// look inside it, and reports a failure at path.
func checkOpaque(data []byte, t reflect.Type, path string) (string, string, bool) {
	if err := json.Unmarshal(data, reflect.New(t).Interface()); err == nil {
		return "", "", false
	}
	if t == timeType {
		return path, fmt.Sprintf("Field %q must be an RFC 3339 date-time string.", pathName(path)), true
	}
	return path, fmt.Sprintf("Field %q has an invalid value.", pathName(path)), true
}

// checkScalar checks a JSON scalar against a scalar Go type.
func checkScalar(data []byte, kind byte, t reflect.Type, path string) (string, string, bool) {
	ok := false
	switch t.Kind() {
	case reflect.String:
		ok = kind == 's' || (t == numberType && kind == 'd')
	case reflect.Bool:
		ok = kind == 'b'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err := strconv.ParseInt(string(data), 10, t.Bits())
		ok = kind == 'd' && err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err := strconv.ParseUint(string(data), 10, t.Bits())
		ok = kind == 'd' && err == nil
	case reflect.Float32, reflect.Float64:
		_, err := strconv.ParseFloat(string(data), t.Bits())
		ok = kind == 'd' && err == nil
	default:
		return "", "", false // channels, funcs: encoding/json reports them
	}
	if ok {
		return "", "", false
	}
	return path, fmt.Sprintf("Field %q must be %s.", pathName(path), kindPhrase(t)), true
}

// checkObject walks a JSON object; elem resolves a key to the type of its
// value, or reports that the key is unknown. A nil type skips the value.
func (x *fieldIndex) checkObject(data []byte, path string, elem func(key string) (reflect.Type, bool)) (string, string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return "", "", false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", "", false
		}
		child := joinPath(path, key)
		t, ok := elem(key)
		if !ok {
			return child, fmt.Sprintf("Unknown field %q.", child), true
		}
		if t == nil {
			continue
		}
		if p, msg, bad := x.checkShape(raw, t, child); bad {
			return p, msg, true
		}
	}
	return "", "", false
}

// checkArray walks a JSON array whose elements have type elem.
func (x *fieldIndex) checkArray(data []byte, elem reflect.Type, path string) (string, string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // [
		return "", "", false
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", "", false
		}
		if p, msg, bad := x.checkShape(raw, elem, path+"["+strconv.Itoa(i)+"]"); bad {
			return p, msg, true
		}
	}
	return "", "", false
}

// joinPath appends an object key to a JSON path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// pathName names a path in messages; the root is "body".
func pathName(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// jsonKind classifies a JSON value by its first byte: o(bject), a(rray),
// s(tring), d(igit: number), b(oolean), n(ull).
func jsonKind(data []byte) byte {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return 0
	}
	switch c := data[0]; {
	case c == '{':
		return 'o'
	case c == '[':
		return 'a'
	case c == '"':
		return 's'
	case c == 't' || c == 'f':
		return 'b'
	case c == 'n':
		return 'n'
	default:
		return 'd'
	}
}

// kindPhrase describes what a Go type accepts, for messages.
func kindPhrase(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of another type"
}

var (
	numberType          = reflect.TypeFor[json.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// opaque reports whether t decodes itself from any JSON (json.Unmarshaler),
// so the walk cannot look inside.
func opaque(t reflect.Type) bool {
	return t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

// textual reports whether t decodes from a JSON string through
// encoding.TextUnmarshaler (time.Time, for example).
func textual(t reflect.Type) bool {
	return t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// readBody reads r's body up to limit bytes (DefaultBodyLimit when limit is
// not positive). A larger body is PAYLOAD_TOO_LARGE with details.limit.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	const op = "transport.readBody"
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	tooLarge := fault.E(op, fault.PayloadTooLarge, fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit)).With("limit", limit)
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, &fault.Error{Op: op, Code: fault.InvalidInput, Message: "The request body could not be read.", Err: err}
	}
	return b, nil
}
