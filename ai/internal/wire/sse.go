package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrEventTooLarge is returned by SSE.Next for an event over its limit.
var ErrEventTooLarge = errors.New("server-sent event over the size limit")

// Message is one server-sent event.
type Message struct {
	// Event is the event's name (the "event:" field), empty when unnamed.
	Event string
	// Data is the event's data lines joined by newlines.
	Data string
}

// SSE reads server-sent events (text/event-stream). Comment lines (":"
// keep-alives) carry no event; every line read, comments included, calls
// OnLine, so a keep-alive counts as activity.
type SSE struct {
	r      *bufio.Reader
	max    int
	onLine func()
}

// NewSSE returns a reader of r whose events are at most max bytes.
func NewSSE(r io.Reader, max int, onLine func()) *SSE {
	if onLine == nil {
		onLine = func() {}
	}
	return &SSE{r: bufio.NewReaderSize(r, 16<<10), max: max, onLine: onLine}
}

// Next returns the next event. At the end of the stream it returns the
// event in progress, if any, then io.EOF.
func (s *SSE) Next() (Message, error) {
	var m Message
	var data bytes.Buffer
	have := false
	size := 0
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && have {
				m.Data = data.String()
				return m, nil
			}
			return Message{}, err
		}
		s.onLine()
		size += len(line)
		if size > s.max {
			return Message{}, ErrEventTooLarge
		}
		if len(line) == 0 {
			if have {
				m.Data = data.String()
				return m, nil
			}
			m = Message{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			m.Event = string(value)
		case "data":
			if have {
				data.WriteByte('\n')
			}
			data.Write(value)
			have = true
		}
	}
}

// line returns the next line without its end (\n, \r\n), at most max
// bytes; a last line without an end is returned before io.EOF.
func (s *SSE) line() ([]byte, error) {
	var buf []byte
	for {
		part, err := s.r.ReadSlice('\n')
		if len(buf)+len(part) > s.max+2 {
			return nil, ErrEventTooLarge
		}
		buf = append(buf, part...)
		switch {
		case err == nil:
			buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return bytes.TrimSuffix(buf, []byte("\r")), nil
		default:
			return nil, err
		}
	}
}
