package tui

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// replayFrom computes the tree as of cursor c from scratch.
func replayFrom(h *history, c int) []nodeState {
	view := make([]nodeState, len(h.nodes))
	for i := 0; i <= c; i++ {
		if d := h.deltas[i]; d.node >= 0 {
			next, _ := transition(view[d.node], h.events[i])
			view[d.node] = next
		}
	}
	return view
}

func TestHistorySeekMatchesRecompute(t *testing.T) {
	evs, outline := bigTrace(5000)
	h := newHistory(outline, len(evs))
	for _, e := range evs {
		h.append(e, false)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		c := rng.IntN(len(evs))
		if rng.IntN(4) == 0 {
			c = h.cursor() + rng.IntN(3) - 1 // single steps too
		}
		h.seek(c)
		want := replayFrom(h, h.cursor())
		if !slices.Equal(h.view, want) {
			t.Fatalf("tree at cursor %d differs from a fresh replay", h.cursor())
		}
	}
}

func TestHistoryAddsNodesMissingFromOutline(t *testing.T) {
	h := newHistory(nil, 0)
	for _, e := range stamp(failFastScript()) {
		h.append(e, false)
	}
	var paths []string
	for _, n := range h.nodes {
		paths = append(paths, n.Path)
	}
	if !slices.Equal(paths, []string{"/body/0", "/body/1", "/body/2"}) {
		t.Fatalf("nodes from a bare trace: %v", paths)
	}
	if got := h.view[h.pathIdx["/body/2"]].status; got != statusCancelled {
		t.Fatalf("summarize at the end: %v", got)
	}
}

func TestLightThemeGolden(t *testing.T) {
	m := traceModel(t)
	dark := m.View().Content
	m = update(t, m, tea.BackgroundColorMsg{Color: colorWhite{}})
	if m.styles.IsDark {
		t.Fatal("a white background means a light theme")
	}
	light := m.View().Content
	if dark == light || ansi.Strip(dark) != ansi.Strip(light) {
		t.Fatal("the theme changes colors only, never the text")
	}
	// The light palette's foreground (#1f2328) is drawn; the dark one's is not.
	if !strings.Contains(light, "38;2;31;35;40") || strings.Contains(light, "38;2;230;237;243") {
		t.Fatal("the light theme should use the light palette")
	}
	m = press(t, m, "home", "t")
	golden.RequireEqual(t, plain(m))
}

type colorWhite struct{}

func (colorWhite) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

// sgrColor matches an SGR sequence that sets a foreground or background
// color.
var sgrColor = regexp.MustCompile(`\x1b\[[0-9;:]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])[0-9;:]*m`)

func TestNoColorHasNoColorEscapes(t *testing.T) {
	run := func(env ...string) string {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		var out bytes.Buffer
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// q arrives after the first frames; Run returns once it is handled.
		in := strings.NewReader("q")
		if err := Run(ctx, Options{Runs: []RunSpec{traceSpec()}, Width: 100, Height: 30}, in, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	colored := run("TTY_FORCE=1", "TERM=xterm-256color", "COLORTERM=truecolor", "NO_COLOR=")
	if !sgrColor.MatchString(colored) {
		t.Fatal("with color support the frame should carry color escapes (the test would prove nothing)")
	}
	plainOut := run("TTY_FORCE=1", "TERM=xterm-256color", "COLORTERM=truecolor", "NO_COLOR=1")
	if m := sgrColor.FindString(plainOut); m != "" {
		t.Fatalf("NO_COLOR output carries a color escape %q", m)
	}
	if !strings.Contains(plainOut, "Timeline") {
		t.Fatal("NO_COLOR output should still show the debugger")
	}
}

// TestAsciiProfileKeepsSelectionVisible: without colors the selection is
// still shown (reverse video and a marker).
func TestAsciiProfileKeepsSelectionVisible(t *testing.T) {
	m := traceModel(t)
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
	_, _ = w.Write([]byte(m.View().Content))
	out := buf.String()
	if sgrColor.MatchString(out) {
		t.Fatal("ASCII profile output has colors")
	}
	if !strings.Contains(out, "\x1b[7") && !strings.Contains(out, ";7m") && !strings.Contains(out, ";7;") {
		t.Fatal("the selected row should be in reverse video")
	}
	if !strings.Contains(out, "▶19") {
		t.Fatal("the cursor row should carry a marker")
	}
}

func TestHugeValueIsCut(t *testing.T) {
	big := make([]any, 5000)
	for i := range big {
		big[i] = i
	}
	c := &common{styles: new(Styles), hl: newHighlighter()}
	*c.styles = NewStyles(true)
	lines := c.hl.lines(c.styles, big)
	if len(lines) != maxJSONLines+1 || !strings.Contains(lines[len(lines)-1], "more lines") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
