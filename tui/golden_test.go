package tui

import (
	"os"
	"strings"
	"testing"

	"github.com/treelang/treelang/tracer"

	"github.com/charmbracelet/x/exp/golden"
)

// goldenModel is a model at a fixed size with the pinned dark theme.
func goldenModel(t *testing.T, specs ...RunSpec) Model {
	t.Helper()
	m := NewModel(Options{Runs: specs, Width: 100, Height: 30})
	return update(t, m, tea_WindowSize(100, 30))
}

func TestViewGoldenTraceStart(t *testing.T) {
	m := goldenModel(t, traceSpec())
	m = press(t, m, "home")
	golden.RequireEqual(t, plain(m))
}

func TestViewGoldenRetryLadder(t *testing.T) {
	m := goldenModel(t, traceSpec())
	m = press(t, m, "home")
	for range 9 {
		m = press(t, m, "n")
	}
	golden.RequireEqual(t, plain(m))
}

func TestViewGoldenCausality(t *testing.T) {
	m := goldenModel(t, traceSpec())
	m = press(t, m, "home", "f", "f")
	golden.RequireEqual(t, plain(m))
}

// TestViewGoldenMidRun is the frame README-capture.txt shows: a live run
// paused at the failure that cancels a sibling, the retry ladder done.
func TestViewGoldenMidRun(t *testing.T) {
	d := liveModel(t, true)
	d.send(tea_WindowSize(100, 30))
	d.until("paused at run.start", func(m Model) bool { return histLen(m) == 1 })
	d.keys("b") // no tool on run.start: says so
	d.keys("f") // first failure: fetch attempt 1 (retried)
	d.until("at the first failure", func(m Model) bool { return selectedSeq(m) == 6 && m.sess().state == statePaused })
	d.keys("f")
	d.until("at the search failure", func(m Model) bool { return selectedSeq(m) == 14 && m.sess().state == statePaused })
	d.keys("n", "n")
	d.until("at the cancel", func(m Model) bool { return selectedSeq(m) == 16 && m.sess().state == statePaused })
	frame := plain(d.m)
	golden.RequireEqual(t, frame)
	capture, err := os.ReadFile("README-capture.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(capture), frame) {
		t.Fatal("README-capture.txt does not hold the current mid-run frame; paste testdata/TestViewGoldenMidRun.golden into it")
	}
}

// TestViewGoldenMismatch is a live replay stopped at its drift (the
// mismatch breakpoint is on by default when replaying).
func TestViewGoldenMismatch(t *testing.T) {
	spec := RunSpec{Name: "replay drift", Mode: "replay", Outline: mismatchOutline(), Run: scriptedRun(mismatchScript),
		Policy: "fixture demo.fixture.json", AcceptMismatch: func(*tracer.Event) error { return nil }}
	d := liveModel(t, false, spec)
	d.send(tea_WindowSize(100, 30))
	d.until("stopped at the mismatch", func(m Model) bool { return m.sess().state == statePaused && selectedSeq(m) == 6 })
	m := d.m
	frame := plain(m)
	golden.RequireEqual(t, frame)
	capture, err := os.ReadFile("README-capture.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(capture), frame) {
		t.Fatal("README-capture.txt does not hold the current mismatch frame; paste testdata/TestViewGoldenMismatch.golden into it")
	}
}

func TestViewGoldenBreakpointDialog(t *testing.T) {
	m := goldenModel(t, traceSpec())
	m = press(t, m, "home", "n", "n", "b", "B", "down", "down", "enter")
	golden.RequireEqual(t, plain(m))
}

func TestViewGoldenSaveDialog(t *testing.T) {
	spec := traceSpec()
	spec.Saver = &fakeSaver{}
	m := goldenModel(t, spec)
	m = press(t, m, "s", "down", "space")
	golden.RequireEqual(t, plain(m))
}
