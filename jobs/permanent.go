package jobs

import "errors"

// permanentError marks a handler error that retrying cannot cure.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err, returned by a handler, as a failure that no retry can
// cure (an input that cannot be decoded, an output over its limit): the pool
// discards the job at once with err as its last_error, after this one
// attempt. The text is err's own; errors.Is and errors.As see through the
// mark, so a fault code stays readable. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err or an error it wraps was marked by
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
