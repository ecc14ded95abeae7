package engine

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limits are the optional execution budgets of one run (reference §4).
// Zero means unlimited. All maxima are inclusive.
type Limits struct {
	MaxNodes       int64
	MaxDepth       int64
	MaxCallDepth   int64 // schema 2.0 only
	MaxToolCalls   int64 // physical attempts
	MaxConcurrency int64 // permits for outermost sibling operations
	Timeout        time.Duration
	// TimeoutText is the timeout as the user wrote it, used in the error
	// message ("Execution wall_clock_seconds limit exceeded (0.001)").
	TimeoutText string
}

// SetTimeoutSeconds sets Timeout from a number of seconds, validating it
// like the Python library.
func (l *Limits) SetTimeoutSeconds(text string) error {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return Errorf(ValueError, "timeout_seconds must be a positive number or None")
	}
	l.Timeout = seconds(f)
	if l.Timeout <= 0 {
		l.Timeout = 1 // below a nanosecond: expires at once
	}
	if strings.ContainsAny(text, ".eE") {
		l.TimeoutText = PyFloat(f)
	} else {
		l.TimeoutText = strings.TrimLeft(text, "+")
	}
	return nil
}

// Parallel-failure modes of ExecutionPolicy.
const (
	FailRaise   = "raise"
	FailCollect = "collect"
)

// RetryPolicy says which tool calls are retried and how (reference §5).
// A call is retried only when MaxAttempts > 1 and its tool is listed in
// IdempotentTools. The fields after Retryable are this implementation's
// opt-in extensions; their zero values keep the Python behavior.
type RetryPolicy struct {
	MaxAttempts     int
	Delay           time.Duration
	IdempotentTools []string
	// Retryable lists the retryable error types, matched by class
	// hierarchy. Nil means the default: ToolExecutionError, TimeoutError.
	Retryable []ErrorType

	BackoffMultiplier float64       // > 1: exponential backoff (delay * multiplier^(attempt-1))
	MaxDelay          time.Duration // cap on one backoff sleep; 0 = none
	Jitter            float64       // 0..1: each sleep varies by up to this fraction, seeded
	JitterSeed        uint64        // seed of the jitter, so a replay sleeps the same
	AttemptTimeout    time.Duration // > 0: a hung attempt becomes a retryable TimeoutError
}

// DefaultRetryable are the error types retried when RetryPolicy.Retryable
// is nil.
var DefaultRetryable = []ErrorType{ToolExecutionError, TimeoutError}

// Policy is the opt-in ExecutionPolicy. The zero value keeps historical
// behavior: one attempt per call, the first failure raised.
type Policy struct {
	Retry            RetryPolicy
	ParallelFailures string // "raise" (default when empty) or "collect"
}

// Validate checks the policy like the Python constructors do.
func (p Policy) Validate() error {
	if p.Retry.MaxAttempts < 0 {
		return Errorf(ValueError, "max_attempts must be a positive integer")
	}
	if p.Retry.Delay < 0 {
		return Errorf(ValueError, "delay_seconds must be a non-negative number")
	}
	switch p.ParallelFailures {
	case "", FailRaise, FailCollect:
	default:
		return Errorf(ValueError, "parallel_failures must be 'raise' or 'collect'")
	}
	if p.Retry.Jitter < 0 || p.Retry.Jitter > 1 {
		return Errorf(ValueError, "jitter must be between 0 and 1")
	}
	return nil
}

// Summary is a one-line description of the policy and limits in force.
func Summary(p Policy, l Limits) string {
	var parts []string
	mode := p.ParallelFailures
	if mode == "" {
		mode = FailRaise
	}
	parts = append(parts, "parallel_failures="+mode)
	if p.Retry.MaxAttempts > 1 {
		s := "retry " + strconv.Itoa(p.Retry.MaxAttempts) + "x"
		if p.Retry.Delay > 0 {
			s += " every " + p.Retry.Delay.String()
		}
		if p.Retry.BackoffMultiplier > 1 {
			s += " (x" + strconv.FormatFloat(p.Retry.BackoffMultiplier, 'g', -1, 64) + ")"
		}
		s += " on [" + strings.Join(p.Retry.IdempotentTools, ",") + "]"
		parts = append(parts, s)
	} else {
		parts = append(parts, "no retries")
	}
	add := func(name string, v int64) {
		if v > 0 {
			parts = append(parts, name+"="+strconv.FormatInt(v, 10))
		}
	}
	add("max_nodes", l.MaxNodes)
	add("max_depth", l.MaxDepth)
	add("max_call_depth", l.MaxCallDepth)
	add("max_tool_calls", l.MaxToolCalls)
	add("max_concurrency", l.MaxConcurrency)
	if l.Timeout > 0 {
		parts = append(parts, "timeout="+l.TimeoutText+"s")
	}
	return strings.Join(parts, " · ")
}

// ParsePolicy reads a policy file (DESIGN.md "Policy"): {"retry": {...},
// "parallel_failures": ..., "limits": {...}}. Errors name the JSON path.
func ParsePolicy(data []byte) (Policy, Limits, error) {
	var pol Policy
	var lim Limits
	root, err := decodeTree(data)
	if err != nil {
		return pol, lim, err
	}
	fail := func(path, msg string) (Policy, Limits, error) {
		return Policy{}, Limits{}, &Error{Type: ValueError, Path: path, Message: path + ": " + msg}
	}
	if root.kind != 'o' {
		return fail("/", "the policy must be a JSON object")
	}
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "parallel_failures":
			if v.kind == 'z' {
				continue
			}
			if v.kind != 's' || (v.s != FailRaise && v.s != FailCollect) {
				return fail("/parallel_failures", "parallel_failures must be 'raise' or 'collect'")
			}
			pol.ParallelFailures = v.s
		case "retry":
			if v.kind == 'z' {
				continue
			}
			if v.kind != 'o' {
				return fail("/retry", "must be an object")
			}
			if p, msg := parseRetry(v, &pol.Retry); msg != "" {
				return fail("/retry/"+p, msg)
			}
		case "limits":
			if v.kind == 'z' {
				continue
			}
			if v.kind != 'o' {
				return fail("/limits", "must be an object")
			}
			for j, lk := range v.keys {
				lv := v.vals[j]
				if msg := setLimit(&lim, lk, lv); msg != "" {
					return fail("/limits/"+lk, msg)
				}
			}
		default:
			return fail("/"+k, "unknown field (expected retry, parallel_failures or limits)")
		}
	}
	return pol, lim, nil
}

func parseRetry(v *jval, r *RetryPolicy) (string, string) {
	for i, k := range v.keys {
		x := v.vals[i]
		switch k {
		case "max_attempts":
			n, ok := positiveInt(x)
			if !ok {
				return k, "max_attempts must be a positive integer"
			}
			r.MaxAttempts = int(n)
		case "delay_seconds", "max_delay_seconds", "attempt_timeout_seconds":
			f, ok := number(x)
			if !ok || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
				return k, k + " must be a non-negative number"
			}
			d := seconds(f)
			switch k {
			case "delay_seconds":
				r.Delay = d
			case "max_delay_seconds":
				r.MaxDelay = d
			default:
				r.AttemptTimeout = d
			}
		case "backoff_multiplier":
			f, ok := number(x)
			if !ok || f < 1 || math.IsInf(f, 0) {
				return k, "backoff_multiplier must be a number >= 1"
			}
			r.BackoffMultiplier = f
		case "jitter":
			f, ok := number(x)
			if !ok || f < 0 || f > 1 {
				return k, "jitter must be a number between 0 and 1"
			}
			r.Jitter = f
		case "jitter_seed":
			n, ok := nonNegativeInt(x)
			if !ok {
				return k, "jitter_seed must be a non-negative integer"
			}
			r.JitterSeed = uint64(n)
		case "idempotent_tools":
			if x.kind != 'a' {
				return k, "idempotent_tools must be a list of tool names"
			}
			for j, e := range x.arr {
				if e.kind != 's' {
					return k + "/" + strconv.Itoa(j), "idempotent_tools must be a list of tool names"
				}
				r.IdempotentTools = append(r.IdempotentTools, e.s)
			}
		case "retryable_exceptions":
			if x.kind != 'a' {
				return k, "retryable_exceptions must contain Exception types"
			}
			r.Retryable = []ErrorType{}
			for j, e := range x.arr {
				if e.kind != 's' || !KnownErrorType(e.s) {
					return k + "/" + strconv.Itoa(j), "retryable_exceptions must contain Exception types (unknown " + reprJ(e) + ")"
				}
				r.Retryable = append(r.Retryable, ErrorType(e.s))
			}
		default:
			return k, "unknown field in retry"
		}
	}
	return "", ""
}

// setLimit sets one limit field from JSON, with the Python messages.
func setLimit(l *Limits, key string, v *jval) string {
	if v.kind == 'z' {
		return ""
	}
	if key == "timeout_seconds" {
		if v.kind != 'n' {
			return "timeout_seconds must be a positive number or None"
		}
		if err := l.SetTimeoutSeconds(v.s); err != nil {
			return err.Error()
		}
		return ""
	}
	var dst *int64
	switch key {
	case "max_nodes":
		dst = &l.MaxNodes
	case "max_depth":
		dst = &l.MaxDepth
	case "max_call_depth":
		dst = &l.MaxCallDepth
	case "max_tool_calls":
		dst = &l.MaxToolCalls
	case "max_concurrency":
		dst = &l.MaxConcurrency
	default:
		return "unknown limit (expected max_nodes, max_depth, max_call_depth, max_tool_calls, max_concurrency or timeout_seconds)"
	}
	n, ok := positiveInt(v)
	if !ok {
		return key + " must be a positive integer or None"
	}
	*dst = n
	return ""
}

// SetLimitFlag sets a limit from a command-line flag value such as
// --max-nodes 10 or --timeout 0.5.
func (l *Limits) SetLimitFlag(key, text string) error {
	v := &jval{kind: 'n', s: text}
	if _, err := strconv.ParseFloat(text, 64); err != nil {
		v = &jval{kind: 's', s: text}
	}
	if msg := setLimit(l, key, v); msg != "" {
		return &Error{Type: ValueError, Message: msg}
	}
	return nil
}

func positiveInt(v *jval) (int64, bool) {
	n, ok := nonNegativeInt(v)
	return n, ok && n > 0
}

func nonNegativeInt(v *jval) (int64, bool) {
	if v.kind != 'n' || strings.ContainsAny(v.s, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(v.s, 10, 64)
	if err != nil && !strings.HasPrefix(v.s, "-") && errors.Is(err, strconv.ErrRange) {
		// Python accepts any positive integer; beyond int64 the limit can
		// never be reached.
		return math.MaxInt64, true
	}
	return n, err == nil && n >= 0
}

func number(v *jval) (float64, bool) {
	if v.kind != 'n' {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.s, 64)
	return f, err == nil
}

// seconds converts a non-negative number of seconds to a Duration,
// saturating at the largest one instead of overflowing.
func seconds(f float64) time.Duration {
	if f >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(f * float64(time.Second))
}

// PyFloat formats a float as Python's repr does: shortest round-trip
// digits, scientific only below 1e-4 or from 1e16, and a ".0" on integral
// values.
func PyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// MarshalJSON is used by summaries; policies are written by hand-edited
// files only.
func (p Policy) MarshalJSON() ([]byte, error) {
	m := map[string]any{"parallel_failures": p.ParallelFailures}
	if m["parallel_failures"] == "" {
		m["parallel_failures"] = FailRaise
	}
	r := map[string]any{"max_attempts": max(p.Retry.MaxAttempts, 1), "delay_seconds": p.Retry.Delay.Seconds(),
		"idempotent_tools": p.Retry.IdempotentTools}
	if p.Retry.IdempotentTools == nil {
		r["idempotent_tools"] = []string{}
	}
	m["retry"] = r
	return json.Marshal(m)
}
