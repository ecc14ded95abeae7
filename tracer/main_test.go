package tracer

import (
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is the time of the first event in test traces.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)

// sampleEvents is a small run with every field in use somewhere.
func sampleEvents() []*Event {
	n := func(s string) json.Number { return json.Number(s) }
	return []*Event{
		{Seq: 1, Time: t0, Kind: RunStart, Branch: -1, Data: map[string]any{"schema_version": "1.0", "program_hash": "abc"}},
		{Seq: 2, Time: t0.Add(time.Microsecond), Kind: NodeEnter, Site: Site{Path: "/body/0"}, Node: "map", Branch: 0, Depth: 1},
		{Seq: 3, Time: t0.Add(2 * time.Millisecond), Kind: ToolAttemptStart, Site: Site{Path: "/body/0/function/body", Iter: []int{3}, Attempt: 1},
			Tool: "add", Branch: 0, Depth: 3, Requested: 3,
			Arguments: map[string]any{"a": n("12345678901234567890123"), "b": n("0.30000000000000004"), "c": []any{true, false, nil, "x\n\"y\"\u2028é"}},
			Counters:  &Counters{Nodes: 4, ToolCalls: 1}},
		{Seq: 4, Time: t0.Add(3 * time.Millisecond), Kind: ToolAttemptEnd, Site: Site{Path: "/body/0/function/body", Iter: []int{3}, Attempt: 1},
			Tool: "add", Branch: 0, Depth: 3, Error: &ErrorInfo{Type: "ToolExecutionError", Message: "flaky: try again"}, Duration: 1234567 * time.Nanosecond},
		{Seq: 5, Time: t0.Add(4 * time.Millisecond), Kind: RetryBackoffStart, Site: Site{Path: "/body/0/function/body", Iter: []int{3}, Attempt: 1},
			Tool: "add", Branch: 0, DelayMS: 250.5},
		{Seq: 6, Time: t0.Add(5 * time.Millisecond), Kind: ToolAttemptEnd, Site: Site{Path: "/body/0/function/body", Iter: []int{3}, Attempt: 2},
			Tool: "add", Branch: 0, Output: nil, HasOutput: true},
		{Seq: 7, Time: t0.Add(6 * time.Millisecond), Kind: Cancel, Site: Site{Path: "/body/1"}, Branch: 1, Reason: ReasonSibling, Cause: "/body/0[3]#2"},
		{Seq: 8, Time: t0.Add(7 * time.Millisecond), Kind: BranchOutcome, Branch: 1, Outcome: &Outcome{ErrorType: "TimeoutError", ErrorMessage: "too slow"}},
		{Seq: 9, Time: t0.Add(7 * time.Millisecond), Kind: BranchOutcome, Branch: 0, Outcome: &Outcome{Success: true, Value: []any{n("1"), n("2.50")}}},
		{Seq: 10, Time: t0.Add(8 * time.Millisecond), Kind: LimitExceeded, Branch: -1, Message: "max_tool_calls 5 reached", Counters: &Counters{Nodes: 9, ToolCalls: 5}},
		{Seq: 11, Time: t0.Add(9 * time.Millisecond), Kind: RunEnd, Branch: -1, Output: map[string]any{"ok": true}, HasOutput: true, Duration: 9 * time.Millisecond,
			Counters: &Counters{Nodes: 9, ToolCalls: 5}},
	}
}
