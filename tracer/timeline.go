package tracer

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// valueWidth is how many characters of a value's compact JSON a timeline
// line shows.
const valueWidth = 80

// Timeline renders events as readable text, one line per event, followed by
// a summary of the run when closed. It is a Sink, so a headless run can
// print its timeline as it goes; WriteTimeline renders a saved trace.
//
// A line reads, for example:
//
//	12    +3.250ms    tool.attempt.start /body/0[1] add attempt 2/3 args={"a":1,"b":2}
//
// with the sequence number, the time since the first event, indentation by
// depth, the kind and what applies of site, node, tool, attempt, values,
// error, backoff delay, cancellation reason and cause, branch and outcome.
type Timeline struct {
	w     *bufio.Writer
	first time.Time
	n     int
	sum   summary
	line  []byte
}

// summary counts what the closing lines report.
type summary struct {
	attempts, retries, failures, cancels, failedBranches, limits, mismatches int
	end                                                                      *Event
	last                                                                     time.Time
}

// NewTimeline returns a Timeline that writes to w.
func NewTimeline(w io.Writer) *Timeline {
	return &Timeline{w: bufio.NewWriter(w)}
}

// Write renders one event.
func (t *Timeline) Write(e *Event) error {
	if t.n == 0 {
		t.first = e.Time
	}
	t.n++
	t.count(e)
	t.line = t.appendLine(t.line[:0], e)
	_, err := t.w.Write(t.line)
	return err
}

func (t *Timeline) count(e *Event) {
	s := &t.sum
	switch e.Kind {
	case ToolAttemptStart:
		s.attempts++
	case ToolAttemptEnd:
		if e.Error != nil {
			s.failures++
		}
	case RetryBackoffStart:
		s.retries++
	case Cancel:
		s.cancels++
	case BranchOutcome:
		if e.Outcome != nil && !e.Outcome.Success {
			s.failedBranches++
		}
	case LimitExceeded:
		s.limits++
	case ReplayMismatch:
		s.mismatches++
	case RunEnd:
		s.end = e
	}
	if !e.Time.IsZero() {
		s.last = e.Time
	}
}

func (t *Timeline) appendLine(b []byte, e *Event) []byte {
	b = fmt.Appendf(b, "%6d %12s  ", e.Seq, relTime(e.Time, t.first))
	for range min(max(e.Depth, 0), 40) {
		b = append(b, "  "...)
	}
	b = append(b, e.Kind.String()...)
	if e.Site.Path != "" || len(e.Site.Iter) > 0 {
		b = append(b, ' ')
		b = append(b, e.Site.Instance().String()...)
	}
	if e.Node != "" {
		b = append(b, " ("+e.Node+")"...)
	}
	if e.Tool != "" {
		b = append(b, ' ')
		b = append(b, e.Tool...)
	}
	if e.Site.Attempt > 0 {
		b = append(b, " attempt "...)
		b = strconv.AppendInt(b, int64(e.Site.Attempt), 10)
		if e.Requested > 0 {
			b = append(b, '/')
			b = strconv.AppendInt(b, int64(e.Requested), 10)
		}
	}
	if e.Branch >= 0 {
		b = append(b, " branch "...)
		b = strconv.AppendInt(b, int64(e.Branch), 10)
	}
	if e.Arguments != nil {
		b = append(b, " args="...)
		b = appendCompact(b, e.Arguments)
	}
	if e.HasOutput {
		b = append(b, " => "...)
		b = appendCompact(b, e.Output)
	}
	if e.Error != nil {
		b = append(b, " error "...)
		b = append(b, e.Error.Type...)
		b = append(b, ": "...)
		b = append(b, truncate(oneLine(e.Error.Message), 2*valueWidth)...)
	}
	if e.DelayMS != 0 {
		b = append(b, " delay "...)
		b = append(b, time.Duration(e.DelayMS*float64(time.Millisecond)).String()...)
	}
	if o := e.Outcome; o != nil {
		if o.Success {
			b = append(b, " ok "...)
			b = appendCompact(b, o.Value)
		} else {
			b = append(b, " failed "...)
			b = append(b, o.ErrorType...)
			b = append(b, ": "...)
			b = append(b, truncate(oneLine(o.ErrorMessage), 2*valueWidth)...)
		}
	}
	if e.Reason != "" {
		b = append(b, " reason="...)
		b = append(b, e.Reason...)
	}
	if e.Cause != "" {
		b = append(b, " cause="...)
		b = append(b, e.Cause...)
	}
	if c := e.Counters; c != nil && (e.Kind == LimitExceeded || e.Kind == RunEnd) {
		b = fmt.Appendf(b, " nodes=%d tool_calls=%d", c.Nodes, c.ToolCalls)
	}
	if e.Duration != 0 {
		b = append(b, " ("...)
		b = append(b, e.Duration.String()...)
		b = append(b, ')')
	}
	if e.Message != "" {
		b = append(b, " — "...)
		b = append(b, truncate(oneLine(e.Message), 2*valueWidth)...)
	}
	return append(b, '\n')
}

// relTime renders t relative to first, as +12.345ms (or +1.234s from ten
// seconds on).
func relTime(t, first time.Time) string {
	if t.IsZero() || first.IsZero() {
		return ""
	}
	d := t.Sub(first)
	if d >= 10*time.Second || d <= -10*time.Second {
		return "+" + strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
	}
	return "+" + strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + "ms"
}

func appendCompact(b []byte, v any) []byte {
	start := len(b)
	b, err := appendValue(b, v)
	if err != nil {
		b = append(b[:start], fmt.Sprintf("%v", v)...)
	}
	s := truncate(string(b[start:]), valueWidth)
	return append(b[:start], s...)
}

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// Flush writes out buffered text.
func (t *Timeline) Flush() error { return t.w.Flush() }

// Close writes the summary and flushes.
func (t *Timeline) Close() error {
	if err := t.writeSummary(); err != nil {
		return err
	}
	return t.w.Flush()
}

func (t *Timeline) writeSummary() error {
	s := t.sum
	var b []byte
	b = append(b, "---\n"...)
	switch end := s.end; {
	case end == nil:
		b = append(b, "run: no run.end (the trace stops early)\n"...)
	case end.Error != nil:
		b = fmt.Appendf(b, "error: %s: %s\n", end.Error.Type, oneLine(end.Error.Message))
	case end.HasOutput:
		b = append(b, "result: "...)
		b = appendCompact(b, end.Output)
		b = append(b, '\n')
	default:
		b = append(b, "run: ended\n"...)
	}
	b = fmt.Appendf(b, "events: %d, tool attempts: %d, retries: %d, failures: %d, cancellations: %d",
		t.n, s.attempts, s.retries, s.failures, s.cancels)
	if s.failedBranches > 0 {
		b = fmt.Appendf(b, ", failed branches: %d", s.failedBranches)
	}
	if s.limits > 0 {
		b = fmt.Appendf(b, ", limits exceeded: %d", s.limits)
	}
	if s.mismatches > 0 {
		b = fmt.Appendf(b, ", replay mismatches: %d", s.mismatches)
	}
	switch {
	case s.end != nil && s.end.Duration != 0:
		b = append(b, ", duration: "...)
		b = append(b, s.end.Duration.String()...)
	case t.n > 0 && !t.first.IsZero():
		b = append(b, ", duration: "...)
		b = append(b, s.last.Sub(t.first).String()...)
	}
	b = append(b, '\n')
	_, err := t.w.Write(b)
	return err
}

// WriteTimeline writes the text timeline of events to w, with the summary
// at the end.
func WriteTimeline(w io.Writer, events []*Event) error {
	t := NewTimeline(w)
	for _, e := range events {
		if err := t.Write(e); err != nil {
			return err
		}
	}
	return t.Close()
}

// CopyTimeline streams the trace in r to w as a text timeline with the
// summary at the end. It stops at the first read error, after writing what
// came before it.
func CopyTimeline(w io.Writer, r *Reader) error {
	t := NewTimeline(w)
	for {
		e, err := r.Next()
		if err == io.EOF {
			return t.Close()
		}
		if err != nil {
			t.Flush()
			return err
		}
		if err := t.Write(e); err != nil {
			return err
		}
	}
}
