package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// statusBar is the top line: mode, run name, run state, budget counters as
// of the cursor, the policy in force, breakpoints, and the latest note.
type statusBar struct {
	c      *common
	sess   *session
	width  int
	run    int // index of the shown run
	runs   int // how many runs there are
	keyErr string
}

func newStatusBar(c *common) statusBar { return statusBar{c: c} }

// SetSize sets the bar's width; it is always one line high.
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
		return fitLine("", b.width)
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
	if s.spec.Policy != "" {
		parts = append(parts, st.Muted.Render("policy: ")+s.spec.Policy)
	}
	bp := fmt.Sprintf("breakpoints %d", s.enabledBreakpoints())
	if s.runTo != nil {
		bp += " +run-to " + s.runTo.Kind.String()
	}
	parts = append(parts, bp)
	line := strings.Join(parts, st.Muted.Render(" │ "))
	note := s.note
	if b.keyErr != "" {
		note = b.keyErr
	}
	if note != "" {
		line += st.Muted.Render(" │ ") + st.Accent.Render(note)
	}
	return fitLine(line, b.width)
}

// ShortHelp lists nothing: the bar has no bindings of its own.
func (b statusBar) ShortHelp() []key.Binding { return nil }

// FullHelp lists nothing.
func (b statusBar) FullHelp() [][]key.Binding { return nil }
