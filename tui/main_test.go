package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/treelang/treelang/tracer"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest watches SIGINT for the life of the test binary.
		goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("os/signal.loop"),
		// chroma's regexp engine keeps a coarse clock goroutine.
		goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"),
		goleak.IgnoreAnyFunction("os/signal.signal_recv"),
	)
}

// keyMsg builds the key press a user would send: "n", "right", "space",
// "tab", "enter", "esc", "B", "ctrl+c", ...
func keyMsg(s string) tea.KeyPressMsg {
	codes := map[string]rune{
		"right": tea.KeyRight, "left": tea.KeyLeft, "up": tea.KeyUp, "down": tea.KeyDown,
		"tab": tea.KeyTab, "enter": tea.KeyEnter, "esc": tea.KeyEscape, "home": tea.KeyHome,
		"end": tea.KeyEnd, "pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "backspace": tea.KeyBackspace,
	}
	if c, ok := codes[s]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	switch s {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	}
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

// press feeds keys to the model's Update and runs their commands
// (previews, saves of fakes); for models without a live run.
func press(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		m = update(t, m, keyMsg(k))
	}
	return m
}

// update feeds one message and runs its immediate commands.
func update(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	nm, cmd := m.Update(msg)
	m = nm.(Model)
	return runSync(t, m, cmd)
}

// runSync runs commands synchronously and feeds their messages back. It
// is for models without a live run (traces), whose commands all return at
// once; tests of live runs use driver instead.
func runSync(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	switch msg := cmd().(type) {
	case nil:
		return m
	case tea.BatchMsg:
		for _, c := range msg {
			m = runSync(t, m, c)
		}
		return m
	case tea.QuitMsg:
		return m
	default:
		return update(t, m, msg)
	}
}

// driver runs a model's commands concurrently, as a Program would, and
// feeds their messages to Update until a condition holds.
type driver struct {
	t    *testing.T
	m    Model
	msgs chan tea.Msg
}

func newDriver(t *testing.T, m Model) *driver {
	d := &driver{t: t, m: m, msgs: make(chan tea.Msg, 1024)}
	d.run(m.Init())
	t.Cleanup(func() { d.m.shutdown() })
	return d
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				d.run(c)
			}
			return
		}
		if msg != nil {
			d.msgs <- msg
		}
	}()
}

// send feeds msg to Update and starts its command.
func (d *driver) send(msg tea.Msg) {
	nm, cmd := d.m.Update(msg)
	d.m = nm.(Model)
	d.run(cmd)
}

// keys presses keys in order.
func (d *driver) keys(keys ...string) {
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

// until feeds messages until cond holds; it fails the test after 15 s.
func (d *driver) until(what string, cond func(m Model) bool) {
	d.t.Helper()
	deadline := time.After(15 * time.Second)
	for !cond(d.m) {
		select {
		case msg := <-d.msgs:
			if _, quit := msg.(tea.QuitMsg); quit {
				if cond(d.m) {
					return
				}
				continue
			}
			d.send(msg)
		case <-deadline:
			d.t.Fatalf("timed out waiting until %s; screen:\n%s", what, plain(d.m))
		}
	}
}

// plain renders the model's frame without any escape sequence, as a
// terminal without color support would show it.
func plain(m Model) string {
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.NoTTY}
	_, _ = w.Write([]byte(m.View().Content))
	return buf.String()
}

func num(s string) json.Number { return json.Number(s) }

// site builds a site.
func site(path string, attempt int) tracer.Site { return tracer.Site{Path: path, Attempt: attempt} }

// failFastOutline is the program tree of the scripted run.
func failFastOutline() []OutlineNode {
	return []OutlineNode{
		{Path: "/", Type: "program", Label: "program", Depth: 0},
		{Path: "/body/0", Type: "tool_call", Label: "fetch", Depth: 1},
		{Path: "/body/0/params/0", Type: "value", Label: "url", Depth: 2},
		{Path: "/body/1", Type: "tool_call", Label: "search", Depth: 1},
		{Path: "/body/2", Type: "tool_call", Label: "summarize", Depth: 1},
	}
}

// failFastScript is a run with a retry ladder (fetch fails once, backs off,
// succeeds), a failure (search) and the sibling it cancels (summarize).
// Seq and Time are left for the tracer (or stamp) to assign.
func failFastScript() []*tracer.Event {
	errInfo := func(t, m string) *tracer.ErrorInfo { return &tracer.ErrorInfo{Type: t, Message: m} }
	cnt := func(n, c int64) *tracer.Counters { return &tracer.Counters{Nodes: n, ToolCalls: c} }
	return []*tracer.Event{
		{Kind: tracer.RunStart, Branch: -1, Counters: cnt(0, 0)},
		{Kind: tracer.NodeEnter, Site: site("/body/0", 0), Node: "tool_call", Branch: 0, Depth: 1},
		{Kind: tracer.ToolAttemptStart, Site: site("/body/0", 1), Tool: "fetch", Branch: 0, Requested: 3,
			Arguments: map[string]any{"url": "https://example.test/a", "limit": num("10")}, Counters: cnt(2, 1)},
		{Kind: tracer.NodeEnter, Site: site("/body/1", 0), Node: "tool_call", Branch: 1, Depth: 1},
		{Kind: tracer.ToolAttemptStart, Site: site("/body/1", 1), Tool: "search", Branch: 1, Requested: 1,
			Arguments: map[string]any{"q": "treelang"}, Counters: cnt(3, 2)},
		{Kind: tracer.ToolAttemptEnd, Site: site("/body/0", 1), Tool: "fetch", Branch: 0, Requested: 3,
			Error: errInfo("ToolExecutionError", "connection reset"), Duration: 12 * time.Millisecond},
		{Kind: tracer.RetryBackoffStart, Site: site("/body/0", 1), Tool: "fetch", Branch: 0, DelayMS: 100},
		{Kind: tracer.RetryBackoffEnd, Site: site("/body/0", 1), Tool: "fetch", Branch: 0, DelayMS: 100},
		{Kind: tracer.ToolAttemptStart, Site: site("/body/0", 2), Tool: "fetch", Branch: 0, Requested: 3,
			Arguments: map[string]any{"url": "https://example.test/a", "limit": num("10")}, Counters: cnt(3, 3)},
		{Kind: tracer.ToolAttemptEnd, Site: site("/body/0", 2), Tool: "fetch", Branch: 0, Requested: 3,
			Output: map[string]any{"status": num("200"), "body": "ok"}, HasOutput: true, Duration: 3 * time.Millisecond},
		{Kind: tracer.NodeExit, Site: site("/body/0", 0), Node: "tool_call", Branch: 0,
			Output: map[string]any{"status": num("200"), "body": "ok"}, HasOutput: true},
		{Kind: tracer.NodeEnter, Site: site("/body/2", 0), Node: "tool_call", Branch: 2, Depth: 1},
		{Kind: tracer.ToolAttemptStart, Site: site("/body/2", 1), Tool: "summarize", Branch: 2, Requested: 1,
			Arguments: map[string]any{"text": "ok"}, Counters: cnt(4, 4)},
		{Kind: tracer.ToolAttemptEnd, Site: site("/body/1", 1), Tool: "search", Branch: 1, Requested: 1,
			Error: errInfo("ToolExecutionError", "search backend down"), Duration: 20 * time.Millisecond},
		{Kind: tracer.NodeExit, Site: site("/body/1", 0), Node: "tool_call", Branch: 1,
			Error: errInfo("ToolExecutionError", "search backend down")},
		{Kind: tracer.Cancel, Site: site("/body/2", 1), Tool: "summarize", Branch: 2,
			Reason: tracer.ReasonSibling, Cause: "/body/1#1"},
		{Kind: tracer.ToolAttemptEnd, Site: site("/body/2", 1), Tool: "summarize", Branch: 2,
			Error: errInfo("CancelledError", "cancelled: sibling failed"), Reason: tracer.ReasonSibling},
		{Kind: tracer.NodeExit, Site: site("/body/2", 0), Node: "tool_call", Branch: 2,
			Error: errInfo("CancelledError", "cancelled: sibling failed")},
		{Kind: tracer.RunEnd, Branch: -1, Error: errInfo("ToolExecutionError", "search backend down"), Counters: cnt(4, 4)},
	}
}

// stamp assigns Seq and Time as a tracer would, for preloaded traces.
func stamp(evs []*tracer.Event) []*tracer.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, e := range evs {
		e.Seq = uint64(i + 1)
		e.Time = t0.Add(time.Duration(i) * 10 * time.Millisecond)
	}
	return evs
}

// fixedClock makes a tracer stamp events 10 ms apart from a fixed time.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(-10 * time.Millisecond)
	return func() time.Time { t = t.Add(10 * time.Millisecond); return t }
}

// scriptedRun returns a Run that emits script through the tracer, so the
// gate really blocks it, and fails like the script's run.end.
func scriptedRun(script func() []*tracer.Event) func(ctx context.Context, t *tracer.Tracer) (any, error) {
	return func(ctx context.Context, t *tracer.Tracer) (any, error) {
		t.SetClock(fixedClock())
		for _, e := range script() {
			if err := t.Emit(ctx, e); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		return "done", nil
	}
}

// traceSpec is a post-mortem trace of the scripted run.
func traceSpec() RunSpec {
	return RunSpec{
		Name:    "fail fast",
		Mode:    "trace",
		Outline: failFastOutline(),
		Policy:  "retry fetch ×3, 100ms; parallel_failures raise",
		Events:  stamp(failFastScript()),
	}
}

// liveSpec is a live run of the scripted events.
func liveSpec() RunSpec {
	return RunSpec{
		Name:    "fail fast",
		Mode:    "live",
		Outline: failFastOutline(),
		Policy:  "retry fetch ×3, 100ms; parallel_failures raise",
		Run:     scriptedRun(failFastScript),
	}
}

// mismatchScript is a replay that drifts at its second call.
func mismatchScript() []*tracer.Event {
	return []*tracer.Event{
		{Kind: tracer.RunStart, Branch: -1},
		{Kind: tracer.ToolAttemptStart, Site: site("/body/0", 1), Tool: "fetch", Arguments: map[string]any{"url": "https://example.test/a"}},
		{Kind: tracer.ReplayMatch, Site: site("/body/0", 1), Tool: "fetch", Message: "entry 1 matched"},
		{Kind: tracer.ToolAttemptEnd, Site: site("/body/0", 1), Tool: "fetch", Output: "page a", HasOutput: true},
		{Kind: tracer.ToolAttemptStart, Site: site("/body/1", 1), Tool: "fetch", Arguments: map[string]any{"url": "https://example.test/B", "lang": "en"}},
		{Kind: tracer.ReplayMismatch, Site: site("/body/1", 1), Tool: "fetch",
			Message: "replay mismatch at entry 2: fetch arguments changed (url)",
			Data: map[string]any{
				"entry": 2,
				"drift": "changed",
				"expected": map[string]any{"name": "fetch", "arguments": map[string]any{"url": "https://example.test/b", "lang": "en"},
					"output": "page b", "site": "/body/1#1"},
				"actual": map[string]any{"name": "fetch", "arguments": map[string]any{"url": "https://example.test/B", "lang": "en"},
					"site": "/body/1#1"},
				"diff": []any{map[string]any{"path": "/arguments/url", "expected": "https://example.test/b",
					"actual": "https://example.test/B", "kind": "changed"}},
			}},
		{Kind: tracer.ToolAttemptEnd, Site: site("/body/1", 1), Tool: "fetch", Output: "page B", HasOutput: true},
		{Kind: tracer.RunEnd, Branch: -1, Output: []any{"page a", "page B"}, HasOutput: true},
	}
}

func mismatchOutline() []OutlineNode {
	return []OutlineNode{
		{Path: "/", Type: "program", Label: "program"},
		{Path: "/body/0", Type: "tool_call", Label: "fetch", Depth: 1},
		{Path: "/body/1", Type: "tool_call", Label: "fetch", Depth: 1},
	}
}
