package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// statusLines is the height of the status bar.
const statusLines = 2

// statusBar is the top of the screen: mode, run name, run state, budget
// counters as of the cursor, breakpoints and the policy in force; below
// them the latest note (what just happened).
type statusBar struct {
	c      *common
	sess   *session
	width  int
	run    int // index of the shown run
	runs   int // how many runs there are
	keyErr string
}

func newStatusBar(c *common) statusBar { return statusBar{c: c} }

// SetSize sets the bar's width; it is always statusLines high.
func (b statusBar) SetSize(w, _ int) statusBar {
	b.width = w
	return b
}

// Update does nothing: the bar only reflects the session.
func (b statusBar) Update(tea.Msg) (statusBar, tea.Cmd) { return b, nil }

// stateStyle colors the run state.
func (b statusBar) stateText() string {
	st := b.c.styles
	s := b.sess.state
	text := s.String()
	switch s {
	case stateRunning:
		return st.Status[statusRunning].Render(text)
	case statePaused:
		return st.Warn.Bold(true).Render(text)
	case stateDone:
		return st.Good.Bold(true).Render(text)
	case stateFailed:
		return st.Error.Bold(true).Render(text)
	case stateCancelled:
		return st.Status[statusCancelled].Render(text)
	}
	return text
}

// View renders the bar: first line the facts, second the latest note.
func (b statusBar) View() string {
	if b.sess == nil {
		return fitLine("", b.width) + "\n" + fitLine("", b.width)
	}
	st := b.c.styles
	s := b.sess
	mode := s.spec.Mode
	if mode == "" {
		mode = "live"
	}
	parts := []string{st.StatusMode.Render(" " + strings.ToUpper(mode) + " ")}
	name := s.spec.Name
	if b.runs > 1 {
		name = fmt.Sprintf("%s (%d/%d)", name, b.run+1, b.runs)
	}
	if name != "" {
		parts = append(parts, st.Bold.Render(name))
	}
	parts = append(parts, b.stateText())
	if c := s.hist.counters(); c != nil {
		parts = append(parts, fmt.Sprintf("nodes %d · tool calls %d", c.Nodes, c.ToolCalls))
	}
	bp := fmt.Sprintf("breakpoints %d", s.enabledBreakpoints())
	if s.runTo != nil {
		bp += " +run-to " + s.runTo.Kind.String()
	}
	parts = append(parts, bp)
	if s.spec.Policy != "" {
		parts = append(parts, st.Muted.Render("policy: ")+s.spec.Policy)
	}
	line := strings.Join(parts, st.Muted.Render(" │ "))
	note := s.note
	if b.keyErr != "" {
		note = b.keyErr
	}
	if note == "" {
		note = b.position()
	}
	return fitLine(line, b.width) + "\n" + fitLine(" "+st.Accent.Render(note), b.width)
}

// position describes where the cursor is, when there is no fresher note.
func (b statusBar) position() string {
	h := b.sess.hist
	pi := b.sess.pausedIndex()
	switch {
	case h.len() == 0:
		return "no events yet"
	case pi >= 0 && pi == h.cursor() && pi < h.len()-1:
		return fmt.Sprintf("paused at event %d; %d more emitted by other branches wait behind it", pi+1, h.len()-1-pi)
	case b.sess.state == statePaused && b.sess.atNewest():
		return fmt.Sprintf("paused at event %d", h.len())
	case b.sess.atNewest():
		return fmt.Sprintf("at the newest event (%d)", h.len())
	}
	return fmt.Sprintf("looking back: event %d of %d", h.cursor()+1, h.len())
}

// ShortHelp lists nothing: the bar has no bindings of its own.
func (b statusBar) ShortHelp() []key.Binding { return nil }

// FullHelp lists nothing.
func (b statusBar) FullHelp() [][]key.Binding { return nil }
