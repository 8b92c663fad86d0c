package zk

import (
	"errors"
	"fmt"
	"regexp"
)

// Circuit is one circuit version whose verifying key the server pins:
// configuration, never a request's. A new key is a new version; a
// version's key never changes.
type Circuit struct {
	// ID names the circuit, such as "ownership"; Version names the
	// version of its key, such as "1". Both are 1 to 64 characters of
	// a-z, 0-9, '.', '_' and '-', starting with a letter or digit.
	ID      string
	Version string
	// VerifyingKey is the key as snarkjs writes it (verification_key.json).
	VerifyingKey []byte
	// BindingInput is the index, among the circuit's public signals, of
	// the input that must equal Binding(tenant, user, intent, economics
	// hash). A circuit without such an input cannot be pinned: a proof
	// that names no tenant, user and intent would verify for anyone.
	BindingInput int
}

// Environment is one environment's verifier: the circuits pinned there
// and whether verification is enabled.
type Environment struct {
	// Enabled turns verification on. Without it, or without a circuit,
	// the route answers PROVIDER_UNAVAILABLE (package doc, Availability).
	Enabled bool
	// Circuits are the pinned circuit versions.
	Circuits []Circuit
}

// circuit is a pinned circuit with its parsed key.
type circuit struct {
	id, version string
	vk          VerifyingKey
	binding     int
}

// name is the circuit's "id@version", for messages.
func (c circuit) name() string { return c.id + "@" + c.version }

var circuitName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// registry is one environment's pinned circuits by id and version.
type registry struct {
	enabled  bool
	circuits map[[2]string]circuit
}

// newRegistry checks and parses an environment's circuits: valid names,
// no version pinned twice, a key that parses (ParseVerifyingKey), a
// binding input inside the key's public inputs.
func newRegistry(e Environment) (registry, error) {
	r := registry{enabled: e.Enabled, circuits: map[[2]string]circuit{}}
	for _, c := range e.Circuits {
		if !circuitName.MatchString(c.ID) || !circuitName.MatchString(c.Version) {
			return registry{}, fmt.Errorf("circuit %q version %q: ids and versions are 1 to 64 of a-z, 0-9, '.', '_', '-'", c.ID, c.Version)
		}
		key := [2]string{c.ID, c.Version}
		if _, dup := r.circuits[key]; dup {
			return registry{}, fmt.Errorf("circuit %s@%s is pinned twice", c.ID, c.Version)
		}
		vk, err := ParseVerifyingKey(c.VerifyingKey)
		if err != nil {
			return registry{}, fmt.Errorf("circuit %s@%s: verifying key: %w", c.ID, c.Version, err)
		}
		if c.BindingInput < 0 || c.BindingInput >= vk.NbPublic() {
			return registry{}, fmt.Errorf("circuit %s@%s: binding input %d is not one of its %d public inputs", c.ID, c.Version,
				c.BindingInput, vk.NbPublic())
		}
		r.circuits[key] = circuit{id: c.ID, version: c.Version, vk: vk, binding: c.BindingInput}
	}
	return r, nil
}

// errNoCircuit is a lookup of a circuit version that is not pinned.
var errNoCircuit = errors.New("zk: no such circuit version")

// lookup returns the pinned circuit id@version.
func (r registry) lookup(id, version string) (circuit, error) {
	c, ok := r.circuits[[2]string{id, version}]
	if !ok {
		return circuit{}, errNoCircuit
	}
	return c, nil
}

// hasID reports whether some version of circuit id is pinned.
func (r registry) hasID(id string) bool {
	for k := range r.circuits {
		if k[0] == id {
			return true
		}
	}
	return false
}
