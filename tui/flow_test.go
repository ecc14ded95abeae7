package tui

import (
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/treelang/treelang/tracer"
)

// screen accumulates a program's output, escape sequences stripped, so
// flows can wait for text to appear.
type screen struct {
	t  *testing.T
	tm *teatest.TestModel
	vt *vt
}

func startFlow(t *testing.T, opts Options) *screen {
	t.Helper()
	m := NewModel(opts)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 36))
	s := &screen{t: t, tm: tm, vt: newVT(120, 36)}
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
		// Quit without q skips the model's own shutdown: stop runs here.
		if fm, ok := tm.FinalModel(t).(Model); ok {
			fm.shutdown()
		}
	})
	return s
}

// waitFor waits until the screen shows every one of texts at once.
func (s *screen) waitFor(texts ...string) {
	s.t.Helper()
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(15 * time.Second)
	for {
		n, _ := s.tm.Output().Read(buf)
		s.vt.Write(buf[:n])
		screen := s.vt.String()
		ok := true
		for _, x := range texts {
			ok = ok && strings.Contains(screen, x)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %q; the screen shows:\n%s", texts, screen)
		}
		if n == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (s *screen) press(keys ...string) {
	for _, k := range keys {
		s.tm.Send(keyMsg(k))
	}
}

func TestFlowStepAndStepBack(t *testing.T) {
	s := startFlow(t, Options{Runs: []RunSpec{liveSpec()}, StartPaused: true})
	s.waitFor("Timeline  1/1", "paused")
	s.press("n")
	s.waitFor("Timeline  2/2")
	s.press("n")
	s.waitFor("Timeline  3/3", "tool.attempt.start")
	s.press("p")
	s.waitFor("Timeline  2/3", "looking back")
	s.press("n", "n")
	s.waitFor("Timeline  4/4")
	s.press("q")
	s.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestFlowBreakpointHitOnLiveRun(t *testing.T) {
	s := startFlow(t, Options{Runs: []RunSpec{liveSpec()}, StartPaused: true})
	s.waitFor("Timeline  1/1")
	// Open the dialog, add "a cancellation", close, continue.
	s.press("B")
	s.waitFor("Add a breakpoint on", "a cancellation")
	s.press("down", "down", "down", "down", "down", "down", "enter", "esc")
	s.waitFor("breakpoints 1")
	s.press("c")
	s.waitFor("Timeline  16/16", "stopped at breakpoint #1 cancel", "Cancellation causality", "in flight: summarize")
	s.press("c")
	s.waitFor("done")
}

func TestFlowMismatchAccept(t *testing.T) {
	var mu sync.Mutex
	var got []uint64
	spec := RunSpec{
		Name: "replay drift", Mode: "replay", Outline: mismatchOutline(),
		Run: scriptedRun(mismatchScript),
		AcceptMismatch: func(e *tracer.Event) error {
			mu.Lock()
			got = append(got, e.Seq)
			mu.Unlock()
			return nil
		},
	}
	s := startFlow(t, Options{Runs: []RunSpec{spec}})
	s.waitFor("Replay mismatch", "drift: changed", "expected (fixture)", "actual call", "a accept mismatch")
	s.press("a")
	s.waitFor("run finished", "done", "Timeline  8/8")
	s.press("p", "p")
	s.waitFor("Timeline  6/8", "✓ accepted: the actual call is the new fixture entry")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != 6 {
		t.Fatalf("AcceptMismatch calls: %v", got)
	}
}

func TestFlowSaveWithRedaction(t *testing.T) {
	saver := &fakeSaver{exists: map[string]bool{"fail-fast.fixture.json": true}}
	spec := liveSpec()
	spec.Saver = saver
	s := startFlow(t, Options{Runs: []RunSpec{spec}})
	s.waitFor("done", "s save fixture")
	s.press("s")
	s.waitFor("Save fixture", "key:token", "j***@example.test", "2 selected")
	s.press("down", "space")
	s.waitFor("1 selected")
	s.press("enter", "enter")
	s.waitFor("fail-fast.fixture.json exists. overwrite? y/n")
	s.press("y")
	s.waitFor("saved fail-fast.fixture.json")
	_, saves := saver.calls()
	if len(saves) != 2 || saves[0].overwrite || !saves[1].overwrite || len(saves[1].skip) != 1 || saves[1].skip[0] != 2 {
		t.Fatalf("saves: %+v", saves)
	}
}

func TestFlowResize(t *testing.T) {
	s := startFlow(t, Options{Runs: []RunSpec{traceSpec()}})
	s.waitFor("Timeline  19/19")
	s.tm.Send(tea.WindowSizeMsg{Width: 70, Height: 20})
	s.waitFor("Program")
	s.press("q")
	s.tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	fm := s.tm.FinalModel(t).(Model)
	if fm.width != 70 || fm.height != 20 {
		t.Fatalf("final size %dx%d", fm.width, fm.height)
	}
}
