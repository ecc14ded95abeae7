package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/treelang/treelang/tracer"
)

func traceModel(t *testing.T, specs ...RunSpec) Model {
	t.Helper()
	if len(specs) == 0 {
		specs = []RunSpec{traceSpec()}
	}
	m := NewModel(Options{Runs: specs, Width: 100, Height: 30})
	return update(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
}

// selectedSeq is the Seq of the event at the cursor, 0 for none.
func selectedSeq(m Model) uint64 {
	if e := m.sess().hist.selected(); e != nil {
		return e.Seq
	}
	return 0
}

// nodeStatusOf returns the status shown for path.
func nodeStatusOf(m Model, path string) nodeState {
	h := m.sess().hist
	return h.view[h.pathIdx[path]]
}

func TestStepAndStepBack(t *testing.T) {
	m := traceModel(t)
	if got := selectedSeq(m); got != 19 {
		t.Fatalf("a trace opens at its last event, got seq %d", got)
	}
	m = press(t, m, "home")
	if got := selectedSeq(m); got != 1 {
		t.Fatalf("home: seq %d, want 1", got)
	}
	m = press(t, m, "n", "right")
	if got := selectedSeq(m); got != 3 {
		t.Fatalf("two steps: seq %d, want 3", got)
	}
	if st := nodeStatusOf(m, "/body/0"); st.status != statusRunning || st.attempts != 1 {
		t.Fatalf("fetch at its first attempt: %v ×%d", st.status, st.attempts)
	}
	m = press(t, m, "n", "n", "n")
	if st := nodeStatusOf(m, "/body/0"); st.status != statusFailed {
		t.Fatalf("fetch after its failed attempt: %v", st.status)
	}
	m = press(t, m, "n")
	if st := nodeStatusOf(m, "/body/0"); st.status != statusRetrying {
		t.Fatalf("fetch backing off: %v", st.status)
	}
	m = press(t, m, "p", "left", "p")
	if got := selectedSeq(m); got != 4 {
		t.Fatalf("three steps back: seq %d, want 4", got)
	}
	if st := nodeStatusOf(m, "/body/0"); st.status != statusRunning {
		t.Fatalf("fetch after stepping back: %v", st.status)
	}
	m = press(t, m, "home", "p")
	if got := selectedSeq(m); got != 1 || !strings.Contains(m.sess().note, "first event") {
		t.Fatalf("step back at the start: seq %d, note %q", got, m.sess().note)
	}
	m = press(t, m, "end", "n")
	if !strings.Contains(plain(m), "at the last event") {
		t.Fatalf("stepping past the end of a trace should say so:\n%s", plain(m))
	}
}

func TestRunToFailureRetryCancel(t *testing.T) {
	m := traceModel(t)
	m = press(t, m, "home", "f")
	if got := selectedSeq(m); got != 6 {
		t.Fatalf("next failure: seq %d, want 6 (fetch attempt 1)", got)
	}
	m = press(t, m, "f")
	if got := selectedSeq(m); got != 14 {
		t.Fatalf("next failure: seq %d, want 14 (search)", got)
	}
	if st := nodeStatusOf(m, "/body/1"); st.status != statusFailed {
		t.Fatalf("search at its failure: %v", st.status)
	}
	m = press(t, m, "home", "t")
	if got := selectedSeq(m); got != 7 {
		t.Fatalf("next retry: seq %d, want 7", got)
	}
	m = press(t, m, "x")
	if got := selectedSeq(m); got != 16 {
		t.Fatalf("next cancellation: seq %d, want 16", got)
	}
	if st := nodeStatusOf(m, "/body/2"); st.status != statusCancelled {
		t.Fatalf("summarize at its cancellation: %v", st.status)
	}
	m = press(t, m, "x")
	if got := selectedSeq(m); got != 19 || !strings.Contains(m.sess().note, "no further cancellation") {
		t.Fatalf("no more cancellations: seq %d note %q", got, m.sess().note)
	}
}

func TestBreakpointOnToolAndContinue(t *testing.T) {
	m := traceModel(t)
	// Select search's attempt (seq 5) in the timeline and break on its tool.
	m = press(t, m, "home", "n", "n", "n", "n", "b")
	if len(m.sess().bps) != 1 || m.sess().bps[0].Tool != "search" || m.sess().bps[0].Kind != tracer.BreakTool {
		t.Fatalf("b on a search event: breakpoints %v", m.sess().bps)
	}
	if !strings.Contains(plain(m), "breakpoints 1") {
		t.Fatalf("status bar should count the breakpoint:\n%s", plain(m))
	}
	m = press(t, m, "home", "c")
	if got := selectedSeq(m); got != 5 {
		t.Fatalf("continue to the search breakpoint: seq %d, want 5", got)
	}
	m = press(t, m, "c")
	if got := selectedSeq(m); got != 19 {
		t.Fatalf("continue past the only hit: seq %d, want 19", got)
	}
	m = press(t, m, "home", "n", "n", "n", "n", "b") // toggles it off
	if len(m.sess().bps) != 0 {
		t.Fatalf("b again should remove it: %v", m.sess().bps)
	}
}

func TestBreakpointOnTreeNode(t *testing.T) {
	m := traceModel(t)
	m = press(t, m, "shift+tab")
	if m.focus != focusTree {
		t.Fatalf("shift+tab from the timeline should focus the tree, got %d", m.focus)
	}
	m = press(t, m, "home", "down", "down", "down", "b")
	if len(m.sess().bps) != 1 || m.sess().bps[0].Path != "/body/1" || m.sess().bps[0].Kind != tracer.BreakNode {
		t.Fatalf("b on the search node: %v", m.sess().bps)
	}
	m = press(t, m, "tab") // timeline
	m = press(t, m, "home", "c")
	if got := selectedSeq(m); got != 4 {
		t.Fatalf("continue to node /body/1: seq %d, want 4", got)
	}
}

func TestConditionalBreakpointDialog(t *testing.T) {
	m := traceModel(t)
	m = press(t, m, "home", "n", "n", "B") // on fetch's attempt start
	if m.dialog != dialogBreakpoints {
		t.Fatal("B should open the breakpoint dialog")
	}
	view := plain(m)
	for _, want := range []string{"Breakpoints", "tool fetch: second attempt", "a failed branch outcome", "a replay mismatch"} {
		if !strings.Contains(view, want) {
			t.Fatalf("dialog lacks %q:\n%s", want, view)
		}
	}
	// Templates: fetch every attempt, fetch second attempt, ...
	m = press(t, m, "down", "enter", "esc")
	if m.dialog != dialogNone {
		t.Fatal("esc should close the dialog")
	}
	bps := m.sess().bps
	if len(bps) != 1 || bps[0].Tool != "fetch" || bps[0].Attempt != 2 {
		t.Fatalf("want a breakpoint on fetch's second attempt, got %v", bps)
	}
	m = press(t, m, "home", "c")
	if got := selectedSeq(m); got != 9 {
		t.Fatalf("continue to fetch attempt 2: seq %d, want 9", got)
	}
	// Disable it in the dialog: continuing then runs to the end.
	m = press(t, m, "B", "space", "esc", "home", "c")
	if got := selectedSeq(m); got != 19 {
		t.Fatalf("a disabled breakpoint must not stop: seq %d", got)
	}
	m = press(t, m, "B", "d", "esc")
	if len(m.sess().bps) != 0 {
		t.Fatalf("d should delete: %v", m.sess().bps)
	}
}

func TestSearchAndFilter(t *testing.T) {
	m := traceModel(t)
	m = press(t, m, "home", "/")
	if !m.timeline.searching {
		t.Fatal("/ should open the search input")
	}
	for _, r := range "tool:fetch" {
		m = press(t, m, string(r))
	}
	m = press(t, m, "enter")
	if m.timeline.searching {
		t.Fatal("enter should close the input")
	}
	if got := len(m.timeline.filtered); got != 6 {
		t.Fatalf("tool:fetch matches %d events, want 6", got)
	}
	if got := selectedSeq(m); got != 3 {
		t.Fatalf("the cursor moves to the first match: seq %d, want 3", got)
	}
	m = press(t, m, ">", ">")
	if got := selectedSeq(m); got != 7 {
		t.Fatalf("two next matches: seq %d, want 7", got)
	}
	m = press(t, m, "<")
	if got := selectedSeq(m); got != 6 {
		t.Fatalf("previous match: seq %d, want 6", got)
	}
	view := plain(m)
	if strings.Contains(view, "search  {") || !strings.Contains(view, `filter "tool:fetch": 6`) {
		t.Fatalf("the timeline should list fetch events only:\n%s", view)
	}
	// Down moves through visible rows only.
	m = press(t, m, "down")
	if got := selectedSeq(m); got != 7 {
		t.Fatalf("down in a filtered timeline: seq %d, want 7", got)
	}
	m = press(t, m, "esc")
	if m.timeline.filter.active() {
		t.Fatal("esc should clear the filter")
	}
	// Free text and is:error.
	m = press(t, m, "/")
	for _, r := range "is:error backend" {
		m = press(t, m, string(r))
	}
	m = press(t, m, "enter")
	if got := len(m.timeline.filtered); got != 3 {
		t.Fatalf("is:error backend matches %d, want 3", got)
	}
}

func TestPaneSwitch(t *testing.T) {
	m := traceModel(t)
	if m.focus != focusTimeline {
		t.Fatalf("the timeline has focus first, got %d", m.focus)
	}
	m = press(t, m, "tab")
	if m.focus != focusDetail || !m.detail.focused {
		t.Fatal("tab: detail")
	}
	m = press(t, m, "tab")
	if m.focus != focusTree || !m.tree.focused || m.detail.focused {
		t.Fatal("tab: tree")
	}
	m = press(t, m, "tab")
	if m.focus != focusTimeline {
		t.Fatal("tab: timeline again")
	}
	// up/down act on the focused pane: in the tree they move the selection,
	// not the cursor.
	m = press(t, m, "tab", "tab")
	before := selectedSeq(m)
	m = press(t, m, "home", "down")
	if selectedSeq(m) != before || m.tree.sel != 1 {
		t.Fatalf("down in the tree: cursor %d->%d, tree sel %d", before, selectedSeq(m), m.tree.sel)
	}
	// enter jumps the cursor to the node's next event.
	m = press(t, m, "enter")
	if e := m.sess().hist.selected(); e.Site.Path != "/body/0" {
		t.Fatalf("enter on fetch: cursor at %s", e.Site)
	}
}

func TestResize(t *testing.T) {
	m := traceModel(t)
	for _, size := range [][2]int{{60, 20}, {100, 30}, {160, 45}, {40, 12}} {
		m = update(t, m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(m.View().Content, "\n")
		if len(lines) != size[1] {
			t.Fatalf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := ansi.StringWidth(l); w != size[0] {
				t.Fatalf("%dx%d: line %d is %d wide: %q", size[0], size[1], i, w, ansi.Strip(l))
			}
		}
	}
	// Full help changes the layout but still fits.
	m = press(t, m, "?")
	if !m.help.ShowAll || !strings.Contains(plain(m), "next retry") {
		t.Fatalf("? should show every binding:\n%s", plain(m))
	}
	if got := len(strings.Split(m.View().Content, "\n")); got != 12 {
		t.Fatalf("with full help: %d lines, want 12", got)
	}
}

func TestViewDeclaresAltScreenAndMouse(t *testing.T) {
	v := traceModel(t).View()
	if !v.AltScreen || v.MouseMode != tea.MouseModeCellMotion {
		t.Fatalf("alt screen %v, mouse %v", v.AltScreen, v.MouseMode)
	}
}

func TestMouseWheelScrollsTimeline(t *testing.T) {
	m := traceModel(t)
	m = update(t, m, tea.WindowSizeMsg{Width: 100, Height: 16})
	m = press(t, m, "home")
	off := m.timeline.offset
	// The timeline starts right of the tree, below the status bar.
	m = update(t, m, tea.MouseWheelMsg{X: 60, Y: 4, Button: tea.MouseWheelDown})
	if m.timeline.offset <= off {
		t.Fatalf("wheel down should scroll the timeline: offset %d -> %d", off, m.timeline.offset)
	}
	if selectedSeq(m) != 1 {
		t.Fatal("scrolling must not move the cursor")
	}
	m = update(t, m, tea.MouseClickMsg{X: 60, Y: 4, Button: tea.MouseLeft})
	if selectedSeq(m) == 1 {
		t.Fatal("a click on a row should select it")
	}
}

func TestDisabledBindingsStayOutOfHelp(t *testing.T) {
	m := traceModel(t)
	m = press(t, m, "?")
	view := plain(m)
	for _, absent := range []string{"accept mismatch", "save fixture", "next run", "restart"} {
		if strings.Contains(view, absent) {
			t.Fatalf("help shows %q, which does not apply:\n%s", absent, view)
		}
	}
	m = press(t, m, "a", "s", "r")
	if m.dialog != dialogNone {
		t.Fatal("disabled keys must do nothing")
	}
}

func TestSwitchRuns(t *testing.T) {
	other := traceSpec()
	other.Name = "collect"
	other.Events = stamp(failFastScript()[:5])
	m := traceModel(t, traceSpec(), other)
	m = press(t, m, "]")
	if m.cur != 1 || !strings.Contains(plain(m), "collect (2/2)") {
		t.Fatalf("] should show the second run:\n%s", plain(m))
	}
	m = press(t, m, "]")
	if m.cur != 0 {
		t.Fatalf("] wraps around, got run %d", m.cur)
	}
	m = press(t, m, "[")
	if m.cur != 1 {
		t.Fatalf("[ goes back, got run %d", m.cur)
	}
}

func TestKeyMapFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"step": ["z", "down"], "quit": ["Q"]}`)
	km, err := LoadKeyMap(good)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(km.Step.Keys(), []string{"z", "down"}) || km.Step.Help().Key != "z/↓" {
		t.Fatalf("step rebound: %v %q", km.Step.Keys(), km.Step.Help().Key)
	}
	m := NewModel(Options{Runs: []RunSpec{traceSpec()}, KeyMapFile: good, Width: 100, Height: 30})
	m = press(t, m, "home", "z")
	if got := selectedSeq(m); got != 2 {
		t.Fatalf("z steps after rebinding: seq %d", got)
	}
	m = press(t, m, "n")
	if got := selectedSeq(m); got != 2 {
		t.Fatalf("n no longer steps: seq %d", got)
	}

	for _, tc := range []struct {
		name, body, want string
	}{
		{"unknown.json", `{"stepp": ["n"]}`, `action "stepp": unknown action`},
		{"empty.json", `{"continue": []}`, `action "continue": empty key list`},
		{"blank.json", `{"pause": [""]}`, `action "pause": empty key name`},
		{"type.json", `{"quit": "q"}`, `action "quit": want a list`},
		{"bad.json", `{"quit": [`, "invalid JSON"},
	} {
		p := write(tc.name, tc.body)
		_, err := LoadKeyMap(p)
		var ke *KeyMapError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
		// The model shows the error and keeps the defaults.
		m := NewModel(Options{Runs: []RunSpec{traceSpec()}, KeyMapFile: p, Width: 100, Height: 30})
		if !strings.Contains(plain(m), "key map") {
			t.Errorf("%s: the status bar should report the bad key map", tc.name)
		}
	}
	_, err = LoadKeyMap(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if err := Run(t.Context(), Options{Runs: []RunSpec{traceSpec()}, KeyMapFile: filepath.Join(dir, "unknown.json")}, strings.NewReader(""), new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "stepp") {
		t.Fatalf("Run with a bad key map: %v", err)
	}
}

// fakeSaver records what the save dialog asked for.
type fakeSaver struct {
	mu       sync.Mutex
	previews [][]string
	saves    []saveCall
	exists   map[string]bool
}

type saveCall struct {
	path      string
	skip      []int
	extraKeys []string
	overwrite bool
}

func (f *fakeSaver) Preview(extra []string) ([]RedactionItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.previews = append(f.previews, slices.Clone(extra))
	items := []RedactionItem{
		{ID: 1, Path: "/calls/0/arguments/token", Detector: "key:token", Preview: "«redacted:token»"},
		{ID: 2, Path: "/calls/1/output/email", Detector: "email", Preview: "j***@example.test"},
	}
	for i, k := range extra {
		items = append(items, RedactionItem{ID: 10 + i, Path: "/calls/0/arguments/" + k, Detector: "key:" + k, Preview: "«redacted:" + k + "»"})
	}
	return items, nil
}

func (f *fakeSaver) Save(path string, skip []int, extra []string, overwrite bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saves = append(f.saves, saveCall{path, slices.Clone(skip), slices.Clone(extra), overwrite})
	if f.exists[path] && !overwrite {
		return fmt.Errorf("save %s: %w", path, os.ErrExist)
	}
	if f.exists == nil {
		f.exists = map[string]bool{}
	}
	f.exists[path] = true
	return nil
}

func (f *fakeSaver) calls() ([][]string, []saveCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.previews), slices.Clone(f.saves)
}

func TestSaveDialogWithRedaction(t *testing.T) {
	saver := &fakeSaver{exists: map[string]bool{"taken.json": true}}
	spec := traceSpec()
	spec.Saver = saver
	m := traceModel(t, spec)
	m = press(t, m, "s")
	if m.dialog != dialogSave {
		t.Fatal("s should open the save dialog")
	}
	view := plain(m)
	for _, want := range []string{"Save fixture", "key:token", "/calls/0/arguments/token", "«redacted:token»", "2 selected"} {
		if !strings.Contains(view, want) {
			t.Fatalf("save dialog lacks %q:\n%s", want, view)
		}
	}
	// Toggle the first item off; add a key rule.
	m = press(t, m, "space", "a")
	for _, r := range "api_key" {
		m = press(t, m, string(r))
	}
	m = press(t, m, "enter")
	previews, _ := saver.calls()
	if len(previews) != 2 || !slices.Equal(previews[1], []string{"api_key"}) {
		t.Fatalf("previews: %v", previews)
	}
	if !strings.Contains(plain(m), "key:api_key") {
		t.Fatalf("the new rule's item should be listed:\n%s", plain(m))
	}
	// Choose the path: an existing file asks before overwriting.
	m = press(t, m, "enter")
	m = update(t, m, keyMsg("ctrl+u")) // clear the suggested name
	m.save.path.SetValue("")
	for _, r := range "taken.json" {
		m = press(t, m, string(r))
	}
	m = press(t, m, "enter")
	if m.save.phase != phaseConfirm || !strings.Contains(plain(m), "taken.json exists. overwrite? y/n") {
		t.Fatalf("an existing file needs confirmation:\n%s", plain(m))
	}
	m = press(t, m, "n")
	if m.save.phase != phasePath {
		t.Fatalf("n returns to the path, phase %d", m.save.phase)
	}
	m = press(t, m, "enter", "y")
	_, saves := saver.calls()
	if len(saves) != 3 {
		t.Fatalf("saves: %+v", saves)
	}
	last := saves[2]
	if !last.overwrite || last.path != "taken.json" || !slices.Equal(last.skip, []int{1}) || !slices.Equal(last.extraKeys, []string{"api_key"}) {
		t.Fatalf("last save: %+v", last)
	}
	if saves[0].overwrite || saves[1].overwrite {
		t.Fatal("never overwrite without confirmation")
	}
	if !strings.Contains(plain(m), "saved taken.json") {
		t.Fatalf("should confirm the save:\n%s", plain(m))
	}
	m = press(t, m, "x")
	if m.dialog != dialogNone {
		t.Fatal("any key closes the dialog after saving")
	}
}

func TestStartPausedOpensTraceAtFirstEvent(t *testing.T) {
	m := NewModel(Options{Runs: []RunSpec{traceSpec()}, StartPaused: true, Width: 100, Height: 30})
	if got := selectedSeq(m); got != 1 {
		t.Fatalf("seq %d, want 1", got)
	}
	if st := nodeStatusOf(m, "/body/0"); st.status != statusPending {
		t.Fatalf("fetch before anything ran: %v", st.status)
	}
}
