package tui

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// bigTrace returns n events of a map over many items: each item enters a
// tool call, tries it (every seventh fails once and is retried after a
// backoff) and exits; a few cancels and failures are sprinkled in.
func bigTrace(n int) ([]*tracer.Event, []OutlineNode) {
	outline := []OutlineNode{
		{Path: "/", Type: "program", Label: "program"},
		{Path: "/body/0", Type: "map", Label: "map", Depth: 1},
		{Path: "/body/0/function", Type: "function", Label: "fn", Depth: 2},
		{Path: "/body/0/function/body/0", Type: "tool_call", Label: "fetch", Depth: 3},
		{Path: "/body/0/function/body/1", Type: "tool_call", Label: "parse", Depth: 3},
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]*tracer.Event, 0, n)
	add := func(e *tracer.Event) {
		e.Seq = uint64(len(evs) + 1)
		e.Time = t0.Add(time.Duration(len(evs)) * time.Millisecond)
		evs = append(evs, e)
	}
	add(&tracer.Event{Kind: tracer.RunStart, Branch: -1})
	for item := 0; len(evs) < n-1; item++ {
		it := []int{item}
		tool := "/body/0/function/body/" + strconv.Itoa(item%2)
		name := [...]string{"fetch", "parse"}[item%2]
		s := func(a int) tracer.Site { return tracer.Site{Path: tool, Iter: it, Attempt: a} }
		args := map[string]any{"id": json.Number(strconv.Itoa(item))}
		add(&tracer.Event{Kind: tracer.NodeEnter, Site: s(0), Node: "tool_call", Depth: 3})
		add(&tracer.Event{Kind: tracer.ToolAttemptStart, Site: s(1), Tool: name, Arguments: args, Requested: 2,
			Counters: &tracer.Counters{Nodes: int64(item * 3), ToolCalls: int64(item)}})
		if item%7 == 0 {
			add(&tracer.Event{Kind: tracer.ToolAttemptEnd, Site: s(1), Tool: name, Requested: 2,
				Error: &tracer.ErrorInfo{Type: "ToolExecutionError", Message: "flaky"}})
			add(&tracer.Event{Kind: tracer.RetryBackoffStart, Site: s(1), Tool: name, DelayMS: 50})
			add(&tracer.Event{Kind: tracer.RetryBackoffEnd, Site: s(1), Tool: name, DelayMS: 50})
			add(&tracer.Event{Kind: tracer.ToolAttemptStart, Site: s(2), Tool: name, Arguments: args, Requested: 2})
			add(&tracer.Event{Kind: tracer.ToolAttemptEnd, Site: s(2), Tool: name, Requested: 2, Output: "ok", HasOutput: true})
		} else {
			add(&tracer.Event{Kind: tracer.ToolAttemptEnd, Site: s(1), Tool: name, Requested: 2, Output: "ok", HasOutput: true})
		}
		add(&tracer.Event{Kind: tracer.NodeExit, Site: s(0), Node: "tool_call", Output: "ok", HasOutput: true})
	}
	add(&tracer.Event{Kind: tracer.RunEnd, Branch: -1, Output: "done", HasOutput: true})
	return evs, outline
}

func bigSpec(evs []*tracer.Event, outline []OutlineNode) RunSpec {
	return RunSpec{Name: "big", Mode: "trace", Outline: outline, Events: evs, Policy: "retry ×2"}
}

// BenchmarkOpenMillionEventTrace measures opening a 1,000,000-event trace
// up to the first rendered frame.
func BenchmarkOpenMillionEventTrace(b *testing.B) {
	evs, outline := bigTrace(1_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m := NewModel(Options{Runs: []RunSpec{bigSpec(evs, outline)}})
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		_ = nm.View()
	}
}

// BenchmarkStepMillionEventTrace measures one step (Update plus View) in the
// middle of a 1,000,000-event trace, alternating forward and back.
func BenchmarkStepMillionEventTrace(b *testing.B) {
	evs, outline := bigTrace(1_000_000)
	var m tea.Model = NewModel(Options{Runs: []RunSpec{bigSpec(evs, outline)}})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.(Model).sess().hist.seek(500_000)
	keys := []tea.KeyPressMsg{keyMsg("n"), keyMsg("p")}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		m, _ = m.Update(keys[i%2])
		_ = m.View()
		i++
	}
}

// BenchmarkFirstFrameDemoRun measures the first frame of a small,
// demo-sized run.
func BenchmarkFirstFrameDemoRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		spec := traceSpec()
		m := NewModel(Options{Runs: []RunSpec{spec}})
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		_ = nm.View()
	}
}

// TestMillionEventStepIsIncremental checks, without timing, that a step at
// a million events touches one delta rather than replaying the history.
func TestMillionEventStepIsIncremental(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a million events")
	}
	evs, outline := bigTrace(1_000_000)
	m := NewModel(Options{Runs: []RunSpec{bigSpec(evs, outline)}, Width: 100, Height: 30})
	h := m.sess().hist
	h.seek(500_000)
	before := h.applied
	_ = press(t, m, "n")
	if h.applied != before+1 {
		t.Fatalf("a step moved the view by %d events", h.applied-before)
	}
	if h.len() != len(evs) {
		t.Fatalf("history holds %d events, want %d", h.len(), len(evs))
	}
}

// BenchmarkFirstFrameLiveRun measures a live demo-sized run from the
// model's creation to the first frame that shows its first event: the run
// goroutine, gate, channel sink and forwarding command included.
func BenchmarkFirstFrameLiveRun(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var m tea.Model = NewModel(Options{Runs: []RunSpec{liveSpec()}, StartPaused: true})
		m, _ = m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		m, cmd := m.Update(startMsg{sid: 0})
		for histLen(m.(Model)) == 0 {
			m, cmd = m.Update(cmd())
		}
		_ = m.View()
		m.(Model).shutdown()
	}
}
