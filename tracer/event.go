package tracer

import (
	"strconv"
	"strings"
	"time"
)

// Kind names what happened at one step of a run.
type Kind uint8

// The event kinds. Their String form is what trace files carry.
const (
	KindUnknown Kind = iota
	RunStart
	NodeEnter
	NodeExit
	ToolAttemptStart
	ToolAttemptEnd
	RetryBackoffStart
	RetryBackoffEnd
	Cancel
	BranchOutcome
	LimitExceeded
	ReplayMatch
	ReplayMismatch
	ModelRequest
	ModelResponse
	RunEnd
	kindCount
)

var kindNames = [...]string{
	KindUnknown:       "unknown",
	RunStart:          "run.start",
	NodeEnter:         "node.enter",
	NodeExit:          "node.exit",
	ToolAttemptStart:  "tool.attempt.start",
	ToolAttemptEnd:    "tool.attempt.end",
	RetryBackoffStart: "retry.backoff.start",
	RetryBackoffEnd:   "retry.backoff.end",
	Cancel:            "cancel",
	BranchOutcome:     "branch.outcome",
	LimitExceeded:     "limit.exceeded",
	ReplayMatch:       "replay.match",
	ReplayMismatch:    "replay.mismatch",
	ModelRequest:      "model.request",
	ModelResponse:     "model.response",
	RunEnd:            "run.end",
}

// String returns the kind's trace-file name, such as "tool.attempt.start".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the kind named s, or false.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s && i != 0 {
			return Kind(i), true
		}
	}
	return KindUnknown, false
}

// Site identifies one runtime instance of a program node: its static JSON
// path from the program root, the iteration indices that led there and the
// attempt number of a tool call.
//
// For schema 1.0, Iter holds the item index of every enclosing map, filter
// or reduce, outermost first. For schema 2.0, Iter is [branch, visit]: the
// body branch and how many times this node had been evaluated before in
// that branch (v2 is strictly sequential within a branch, so this pins the
// instance exactly as the chain of calls would, at constant cost).
type Site struct {
	Path    string
	Iter    []int
	Attempt int
}

// String renders the site as PATH[i,j]#attempt, for example
// "/body/0/function/body[3]#2". Parts that are empty are left out.
func (s Site) String() string {
	if len(s.Iter) == 0 && s.Attempt == 0 {
		return s.Path
	}
	var b strings.Builder
	b.Grow(len(s.Path) + 8)
	b.WriteString(s.Path)
	if len(s.Iter) > 0 {
		b.WriteByte('[')
		for i, n := range s.Iter {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
		b.WriteByte(']')
	}
	if s.Attempt > 0 {
		b.WriteByte('#')
		b.WriteString(strconv.Itoa(s.Attempt))
	}
	return b.String()
}

// Instance returns the site without its attempt number: the key under which
// all attempts of one call are grouped.
func (s Site) Instance() Site { s.Attempt = 0; return s }

// ParseSite parses the String form of a site.
func ParseSite(text string) (Site, error) {
	var s Site
	rest := text
	if i := strings.LastIndexByte(rest, '#'); i >= 0 {
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil || n <= 0 {
			return Site{}, &SiteError{Text: text, Reason: "attempt after '#' must be a positive integer"}
		}
		s.Attempt = n
		rest = rest[:i]
	}
	if strings.HasSuffix(rest, "]") {
		i := strings.LastIndexByte(rest, '[')
		if i < 0 {
			return Site{}, &SiteError{Text: text, Reason: "']' without '['"}
		}
		for _, part := range strings.Split(rest[i+1:len(rest)-1], ",") {
			n, err := strconv.Atoi(part)
			if err != nil || n < 0 {
				return Site{}, &SiteError{Text: text, Reason: "iteration indices must be non-negative integers"}
			}
			s.Iter = append(s.Iter, n)
		}
		rest = rest[:i]
	}
	if rest != "" && rest[0] != '/' {
		return Site{}, &SiteError{Text: text, Reason: "path must start with '/'"}
	}
	s.Path = rest
	return s, nil
}

// SiteError reports a site string that does not parse.
type SiteError struct {
	Text   string
	Reason string
}

func (e *SiteError) Error() string { return "invalid site " + strconv.Quote(e.Text) + ": " + e.Reason }

// ErrorInfo is an error as traces and outcomes carry it: the Python class
// name of its type and its message.
type ErrorInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Outcome is one parallel branch's result in collect mode.
type Outcome struct {
	Success      bool   `json:"success"`
	Value        any    `json:"value"`
	ErrorType    string `json:"error_type"`
	ErrorMessage string `json:"error_message"`
}

// Counters are the run's budget counters at the moment of an event.
type Counters struct {
	Nodes     int64 `json:"nodes"`
	ToolCalls int64 `json:"tool_calls"`
}

// Cancellation reasons carried by Cancel events.
const (
	ReasonSibling  = "sibling_failure" // a sibling branch failed first (fail fast)
	ReasonDeadline = "deadline"        // the run's timeout_seconds expired
	ReasonUser     = "user"            // the caller cancelled (Ctrl-C, the debugger)
	ReasonAttempt  = "attempt_timeout" // the per-attempt timeout of the retry policy
)

// Event is one step of a run. Which fields are set depends on Kind; the
// zero value of a field means "not applicable" except where noted.
//
// The fields that hold pointers come first and the plain numbers last:
// the garbage collector scans an object only up to its last pointer, and
// a debugger keeps millions of events.
type Event struct {
	Time time.Time // assigned by the Tracer from its clock (or by the emitter)
	Node string    // node type for node events: "function", "map", "tool_call", ...
	Tool string    // tool name for tool and backoff events

	Arguments any        // tool arguments (attempt start) or model request
	Output    any        // node, attempt or run value; meaningful when HasOutput
	Error     *ErrorInfo // the failure, if the step failed
	Outcome   *Outcome
	Reason    string    // why a step was cancelled (Reason* constants) or retrying stopped
	Cause     string    // the site that caused a cancellation, if known
	Counters  *Counters // budget counters, on attempt, limit and run events
	Message   string    // free text, such as a replay mismatch report
	Data      map[string]any
	Site      Site // the step's site; Site.Attempt is the attempt number

	Seq       uint64 // assigned by the Tracer, strictly increasing from 1
	Kind      Kind
	HasOutput bool          // Output is set (a null output is still an output)
	DelayMS   float64       // backoff delay in milliseconds
	Branch    int           // body branch index, or -1 when the event belongs to none
	Depth     int           // structural depth of the node
	Duration  time.Duration // how long the step took, on *.end and node.exit
	Requested int           // max attempts the policy allows for this call
}
