package tui

import (
	"testing"

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
