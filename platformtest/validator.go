package platformtest

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
)

// validators holds the validator of every OpenAPI document a System of
// this process served. Building one compiles every schema of its document,
// which would be most of a System's start-up: systems whose configurations
// serve the same document share its validator (a validator is safe for
// concurrent use), and documents that differ only in prose and extensions
// (a limit the document states, a provider's callback window) share their
// compiled schemas.
var validators validatorCache

// validatorCache builds one validator per document, by the document's
// SHA-256, and one schema cache per schema fingerprint (see
// schemaFingerprint).
type validatorCache struct {
	mu      sync.Mutex
	byDoc   map[[sha256.Size]byte]*builtValidator
	schemas map[[sha256.Size]byte]cache.SchemaCache
}

// builtValidator is a validator built once, by the first System that
// served its document, while the others with that document wait.
type builtValidator struct {
	once sync.Once
	v    validator.Validator
	err  error
}

// get returns the validator of spec, building it on first use.
func (c *validatorCache) get(spec []byte) (validator.Validator, error) {
	sum := sha256.Sum256(spec)
	c.mu.Lock()
	if c.byDoc == nil {
		c.byDoc = map[[sha256.Size]byte]*builtValidator{}
		c.schemas = map[[sha256.Size]byte]cache.SchemaCache{}
	}
	b := c.byDoc[sum]
	if b == nil {
		b = &builtValidator{}
		c.byDoc[sum] = b
	}
	c.mu.Unlock()
	b.once.Do(func() { b.v, b.err = c.build(spec) })
	return b.v, b.err
}

// build parses spec and builds its validator on the schema cache of its
// fingerprint.
func (c *validatorCache) build(spec []byte) (validator.Validator, error) {
	fp, err := schemaFingerprint(spec)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	schemas := c.schemas[fp]
	if schemas == nil {
		schemas = cache.NewDefaultCache()
		c.schemas[fp] = schemas
	}
	c.mu.Unlock()
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	v, errs := validator.NewValidator(doc, config.WithSchemaCache(schemas))
	if len(errs) > 0 {
		return nil, fmt.Errorf("build validator: %w", errors.Join(errs...))
	}
	return v, nil
}

// schemaFingerprint hashes spec without what validation does not read:
// the info object, every string-valued description or summary, and every
// extension (x-…). Documents with the same fingerprint have the same
// schemas, so a schema compiled for one serves the other.
func schemaFingerprint(spec []byte) ([sha256.Size]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("decode the OpenAPI document: %w", err)
	}
	delete(doc, "info")
	b, err := json.Marshal(withoutProse(doc))
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("encode the OpenAPI document: %w", err)
	}
	return sha256.Sum256(b), nil
}

// withoutProse returns v without string-valued description and summary
// members and without extension members, at every depth.
func withoutProse(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if _, text := e.(string); text && (k == "description" || k == "summary") || strings.HasPrefix(k, "x-") {
				continue
			}
			out[k] = withoutProse(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutProse(e)
		}
		return out
	}
	return v
}
