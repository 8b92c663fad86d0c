// Package fault holds the one error type of the platform and its stable codes.
//
// Every domain returns *Error with a Code; the transport layer maps the code
// to an HTTP status through a single table and writes the client-safe Message
// and Details. Op names the operation that failed ("apikey.Create") and Err
// wraps the cause, which is logged and never sent to a client. An error that
// carries no code is INTERNAL: clients see a generic message and the cause is
// logged with the request id.
//
// The package is a leaf: it imports nothing of the module, so every package
// can use it without an import cycle.
package fault

import (
	"errors"
	"strings"
)

// Error is the platform's error. The zero value is not useful; build one with
// E, Wrap or a literal.
type Error struct {
	// Code is the stable machine-readable code clients branch on.
	Code Code
	// Message is safe to show to a client. Empty means the code's default.
	Message string
	// Details carries structured, client-safe context such as the field path
	// ("field") or a limit ("limit").
	Details map[string]any
	// Op names the operation that failed, for logs ("store.InTx").
	Op string
	// Err is the wrapped cause; it is logged, never returned to a client.
	Err error
}

// E returns an error with a code and a client-safe message.
func E(op string, code Code, message string) *Error {
	return &Error{Op: op, Code: code, Message: message}
}

// Wrap returns an error that records op and wraps err. If err already carries
// a code, the new error keeps it, so wrapping adds an operation trail without
// changing what a client sees.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Err: err}
}

// Invalid returns an INVALID_INPUT error naming the offending field path.
func Invalid(op, field, message string) *Error {
	return &Error{Op: op, Code: InvalidInput, Message: message, Details: map[string]any{"field": field}}
}

// With returns a copy of e with the detail key set to value.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// Error renders the operation trail, the code and the cause.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
	}
	if e.Code != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(string(e.Code))
	}
	if e.Message != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of the outermost coded *Error in err's chain, or
// Internal if there is none. A nil error has no code.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			break
		}
		if e.Code != "" {
			return e.Code
		}
		err = e.Err
	}
	return Internal
}

// Public returns what a client may see of err: its code, message and
// details. Uncoded errors become INTERNAL with a generic message.
func Public(err error) (Code, string, map[string]any) {
	for e := err; e != nil; {
		var fe *Error
		if !errors.As(e, &fe) {
			break
		}
		if fe.Code != "" {
			msg := fe.Message
			if msg == "" {
				msg = fe.Code.DefaultMessage()
			}
			return fe.Code, msg, fe.Details
		}
		e = fe.Err
	}
	return Internal, Internal.DefaultMessage(), nil
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }
