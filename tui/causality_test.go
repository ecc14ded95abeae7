package tui

import (
	"strings"
	"testing"

	"github.com/treelang/treelang/tracer"
)

func TestLadderSaysWhyRetryingStopped(t *testing.T) {
	e := func(k tracer.Kind, attempt, requested int, errType, reason string) *tracer.Event {
		ev := &tracer.Event{Kind: k, Site: site("/body/0", attempt), Tool: "fetch", Requested: requested, Reason: reason}
		if errType != "" {
			ev.Error = &tracer.ErrorInfo{Type: errType, Message: "boom"}
		}
		return ev
	}
	start, end := tracer.ToolAttemptStart, tracer.ToolAttemptEnd
	backoff := func(a int) []*tracer.Event {
		return []*tracer.Event{
			{Kind: tracer.RetryBackoffStart, Site: site("/body/0", a), Tool: "fetch", DelayMS: 250},
			{Kind: tracer.RetryBackoffEnd, Site: site("/body/0", a), Tool: "fetch", DelayMS: 250},
		}
	}
	cat := func(parts ...[]*tracer.Event) []*tracer.Event {
		var out []*tracer.Event
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	one := func(evs ...*tracer.Event) []*tracer.Event { return evs }
	for _, tc := range []struct {
		name string
		evs  []*tracer.Event
		want string
	}{
		{"succeeded after a retry", cat(one(e(start, 1, 3, "", ""), e(end, 1, 3, "ToolExecutionError", "")), backoff(1),
			one(e(start, 2, 3, "", ""), e(end, 2, 3, "", "succeeded"))), "succeeded on attempt 2"},
		{"not idempotent", one(e(start, 1, 1, "", ""), e(end, 1, 1, "ToolExecutionError", "")),
			"Requested == 1 (not idempotent"},
		{"engine's reason wins", one(e(start, 1, 1, "", ""), e(end, 1, 1, "ToolExecutionError", "not idempotent: fetch is not in idempotent_tools")),
			"not idempotent: fetch is not in idempotent_tools"},
		{"exhausted", cat(one(e(start, 1, 2, "", ""), e(end, 1, 2, "TimeoutError", "")), backoff(1),
			one(e(start, 2, 2, "", ""), e(end, 2, 2, "TimeoutError", ""))), "attempts exhausted (2 of 2)"},
		{"non-retryable", one(e(start, 1, 3, "", ""), e(end, 1, 3, "ValueError", ""), &tracer.Event{Kind: tracer.NodeExit, Site: site("/body/0", 0)}),
			"non-retryable error (ValueError)"},
		{"cancelled", one(e(start, 1, 3, "", ""), e(end, 1, 3, "CancelledError", "cancelled"),
			&tracer.Event{Kind: tracer.Cancel, Site: site("/body/0", 1), Reason: tracer.ReasonSibling, Cause: "/body/1#1"}),
			"cancelled (sibling_failure) by /body/1#1"},
		{"pending", one(e(start, 1, 3, "", ""), e(end, 1, 3, "ToolExecutionError", "")), "retry decision pending"},
		{"backing off", cat(one(e(start, 1, 3, "", ""), e(end, 1, 3, "ToolExecutionError", "")), backoff(1)[:1]),
			"backing off 250ms before attempt 2"},
	} {
		h := newHistory(nil, 0)
		for _, ev := range stamp(tc.evs) {
			h.append(ev, false)
		}
		l := buildLadder(h, h.events[0], h.len()-1)
		if l == nil || !strings.Contains(l.stop, tc.want) {
			t.Errorf("%s: stop %q, want %q", tc.name, l.stop, tc.want)
		}
	}
}
