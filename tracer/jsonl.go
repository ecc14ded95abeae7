package tracer

import (
	"errors"
	"io"
	"os"
	"sync"
)

// Format and Version are what the first line of a trace file names:
// {"format":"treelang-trace","version":1}.
const (
	Format  = "treelang-trace"
	Version = 1
)

// header is the first line of every trace file.
const header = `{"format":"treelang-trace","version":1}` + "\n"

// flushThreshold is how much buffered data makes the writer flush even
// without a flush point.
const flushThreshold = 64 << 10

// ErrClosed is returned by sinks written to after Close.
var ErrClosed = errors.New("tracer: sink closed")

// JSONLWriter is the JSON Lines trace sink. It writes the header line, then
// one event per line, buffering lines in memory.
//
// A line holds these members, in this order, each only when it applies:
//
//	seq          Event.Seq (always)
//	time         Event.Time in UTC, RFC 3339 with nanoseconds (omitted if zero)
//	kind         Kind.String() (always)
//	site         Site.Instance().String(), the site without its attempt
//	attempt      Site.Attempt (omitted if 0)
//	node, tool   Event.Node, Event.Tool (omitted if empty)
//	arguments    Event.Arguments (omitted if nil)
//	output       Event.Output whenever HasOutput, even when it is null
//	error        {"type","message"}
//	delay_ms     Event.DelayMS (omitted if 0)
//	branch       Event.Branch (omitted when -1)
//	outcome      {"success","value"} or {"success","error_type","error_message"}
//	reason       Event.Reason
//	cause        Event.Cause
//	depth        Event.Depth (omitted if 0)
//	counters     {"nodes","tool_calls"}
//	message      Event.Message
//	data         Event.Data, keys sorted
//	duration_ms  Event.Duration in milliseconds, exact to the nanosecond
//	max_attempts Event.Requested (omitted if 0)
//
// Values are written as JSON with object keys sorted; a json.Number is
// written as its exact text. Values that are not decoded JSON go through
// encoding/json.
//
// The buffer is written out (flushed) after every run.end, cancel and
// limit.exceeded event, after every event that carries an error or a
// failed branch outcome, whenever 64 KiB have accumulated, and on Flush and
// Close. Lines are only ever written whole, so a process that crashes leaves
// a file whose every flushed line is readable; at most the line being
// written by the operating system at the moment of the crash is cut, and the
// Reader skips such a truncated last line with a warning.
//
// A JSONLWriter is safe for concurrent use.
type JSONLWriter struct {
	mu        sync.Mutex
	w         io.Writer
	closer    io.Closer // the file CreateJSONL opened, closed by Close
	buf       []byte
	err       error // first write error, sticky
	closed    bool
	flushEach bool
	transform func(*Event) *Event
}

// NewJSONLWriter returns a writer of trace lines to w and writes the header
// line at once. Close flushes but does not close w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	jw := &JSONLWriter{w: w, buf: make([]byte, 0, flushThreshold+4096)}
	jw.buf = append(jw.buf, header...)
	jw.flushLocked()
	return jw
}

// CreateJSONL creates (or truncates) the file at path and returns a writer
// of trace lines to it. The header line is on disk when it returns. Close
// flushes and closes the file.
func CreateJSONL(path string) (*JSONLWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	jw := NewJSONLWriter(f)
	jw.closer = f
	if jw.err != nil {
		f.Close()
		return nil, jw.err
	}
	return jw, nil
}

// SetFlushEveryEvent makes the writer flush after every event when on is
// true: slower, but a crash can then lose nothing that Write accepted.
func (w *JSONLWriter) SetFlushEveryEvent(on bool) {
	w.mu.Lock()
	w.flushEach = on
	w.mu.Unlock()
}

// SetTransform installs a hook that sees every event before it is written
// and returns the event to write instead, typically a redacted copy (see
// Event.Clone and CloneValue). The hook must not modify the event it is
// given, which other sinks also see. If it returns nil the event is not
// written.
func (w *JSONLWriter) SetTransform(f func(*Event) *Event) {
	w.mu.Lock()
	w.transform = f
	w.mu.Unlock()
}

// Write appends e as one line. An event that cannot be encoded (a value
// that is not JSON) is not written and its error returned; the writer
// stays usable.
func (w *JSONLWriter) Write(e *Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if w.transform != nil {
		if e = w.transform(e); e == nil {
			return nil
		}
	}
	start := len(w.buf)
	buf, err := appendEvent(w.buf, e)
	if err != nil {
		w.buf = buf[:start]
		return err
	}
	w.buf = append(buf, '\n')
	if w.flushEach || len(w.buf) >= flushThreshold || isFlushPoint(e) {
		return w.flushLocked()
	}
	return nil
}

// isFlushPoint reports whether e ends a run or records a failure or
// cancellation: the events a post-mortem must find in the file.
func isFlushPoint(e *Event) bool {
	switch e.Kind {
	case RunEnd, Cancel, LimitExceeded, ReplayMismatch:
		return true
	case BranchOutcome:
		if e.Outcome != nil && !e.Outcome.Success {
			return true
		}
	}
	return e.Error != nil
}

func (w *JSONLWriter) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// Flush writes out buffered lines.
func (w *JSONLWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// Close flushes, and closes the file if CreateJSONL opened it. Closing
// twice is harmless.
func (w *JSONLWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.flushLocked()
	if w.closer != nil {
		if cerr := w.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
