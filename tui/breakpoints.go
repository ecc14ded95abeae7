package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// bpTemplate is a breakpoint the dialog offers to add.
type bpTemplate struct {
	label string
	bp    tracer.Breakpoint
}

// breakpointsPane is the breakpoint dialog: the breakpoints set (toggle,
// delete) and conditional ones to add on run events (a tool's second
// attempt, a failed branch outcome, the first mismatch, ...).
type breakpointsPane struct {
	c         *common
	sess      *session
	width     int
	height    int
	sel       int
	templates []bpTemplate
	closed    bool
}

func newBreakpointsPane(c *common) breakpointsPane { return breakpointsPane{c: c, closed: true} }

// open shows the dialog. tool and path are the selected event's tool and
// the selected tree node, offered as templates when set.
func (p breakpointsPane) open(s *session, tool, path string) breakpointsPane {
	p.sess = s
	p.closed = false
	p.sel = 0
	var t []bpTemplate
	if tool != "" {
		t = append(t,
			bpTemplate{"tool " + tool + ": every attempt", tracer.Breakpoint{Kind: tracer.BreakTool, Tool: tool}},
			bpTemplate{"tool " + tool + ": second attempt", tracer.Breakpoint{Kind: tracer.BreakTool, Tool: tool, Attempt: 2}})
	}
	t = append(t, bpTemplate{"any tool: second attempt", tracer.Breakpoint{Kind: tracer.BreakTool, Attempt: 2}})
	if path != "" {
		t = append(t, bpTemplate{"node " + path + " entered", tracer.Breakpoint{Kind: tracer.BreakNode, Path: path}})
	}
	t = append(t,
		bpTemplate{"a failed branch outcome", tracer.Breakpoint{Kind: tracer.BreakFailedOutcome}},
		bpTemplate{"a replay mismatch", tracer.Breakpoint{Kind: tracer.BreakMismatch}},
		bpTemplate{"any failure", tracer.Breakpoint{Kind: tracer.BreakFailure}},
		bpTemplate{"a retry backoff", tracer.Breakpoint{Kind: tracer.BreakRetry}},
		bpTemplate{"a cancellation", tracer.Breakpoint{Kind: tracer.BreakCancel}},
		bpTemplate{"an execution limit", tracer.Breakpoint{Kind: tracer.BreakLimit}},
	)
	p.templates = t
	return p
}

// SetSize sets the space the dialog may use.
func (p breakpointsPane) SetSize(w, h int) breakpointsPane {
	p.width, p.height = w, h
	return p
}

func (p breakpointsPane) items() int { return len(p.sess.bps) + len(p.templates) }

// Update: up/down select, space toggles a breakpoint, d deletes it, enter
// adds the selected template (or toggles), esc closes.
func (p breakpointsPane) Update(msg tea.Msg) (breakpointsPane, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || p.sess == nil {
		return p, nil
	}
	km := p.c.keys
	n := len(p.sess.bps)
	switch {
	case key.Matches(k, km.Cancel), key.Matches(k, km.Breakpoints), key.Matches(k, km.Quit):
		p.closed = true
	case key.Matches(k, km.Up):
		p.sel = max(0, p.sel-1)
	case key.Matches(k, km.Down):
		p.sel = min(p.items()-1, p.sel+1)
	case key.Matches(k, km.Toggle), key.Matches(k, km.Confirm):
		if p.sel < n {
			b := p.sess.bps[p.sel]
			p.sess.setBreakpointEnabled(b.ID, b.Disabled)
		} else if i := p.sel - n; i < len(p.templates) {
			before := len(p.sess.bps)
			p.sess.addBreakpoint(p.templates[i].bp)
			if len(p.sess.bps) > before {
				p.sess.note = "breakpoint set: " + describeBreakpoint(p.sess.bps[len(p.sess.bps)-1])
				p.sel++ // keep the same template selected
			} else {
				p.sess.note = "already set: " + p.templates[i].label
			}
		}
	case key.Matches(k, km.Delete):
		if p.sel < n {
			p.sess.removeBreakpoint(p.sess.bps[p.sel].ID)
			p.sel = max(0, min(p.sel, p.items()-1))
		}
	}
	return p, nil
}

// View renders the dialog box.
func (p breakpointsPane) View() string {
	if p.sess == nil {
		return ""
	}
	st := p.c.styles
	w := max(20, min(64, p.width-4))
	var lines []string
	lines = append(lines, st.DialogTitle.Render("Breakpoints"), "")
	if len(p.sess.bps) == 0 {
		lines = append(lines, st.Muted.Render("  none set"))
	}
	row := func(i int, text string) {
		line := fitLine("  "+text, w)
		if i == p.sel {
			line = st.Selected.Render(fitLine("› "+text, w))
		}
		lines = append(lines, line)
	}
	for i, b := range p.sess.bps {
		box := "[x] "
		if b.Disabled {
			box = "[ ] "
		}
		row(i, box+describeBreakpoint(b))
	}
	lines = append(lines, "", st.Bold.Render("Add a breakpoint on"))
	for i, t := range p.templates {
		row(len(p.sess.bps)+i, "+ "+t.label)
	}
	maxLines := max(3, p.height-2)
	if len(lines) > maxLines {
		// keep the selection visible
		start := max(0, min(p.sel+2-maxLines/2, len(lines)-maxLines))
		lines = lines[start : start+maxLines]
	}
	return st.Dialog.Render(strings.Join(lines, "\n"))
}

// ShortHelp lists the dialog's bindings.
func (p breakpointsPane) ShortHelp() []key.Binding {
	k := p.c.keys
	add := key.NewBinding(key.WithKeys(k.Confirm.Keys()...), key.WithHelp(k.Confirm.Help().Key, "add/toggle"))
	add.SetEnabled(k.Confirm.Enabled())
	return []key.Binding{k.Up, k.Down, k.Toggle, add, k.Delete, k.Cancel}
}

// FullHelp lists the dialog's bindings.
func (p breakpointsPane) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }
