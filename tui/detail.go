package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// detailKey identifies what the detail lines were built for.
type detailKey struct {
	sess   *session
	gen    int
	cursor int
	n      int
	dark   bool
}

// detailPane shows the selected step: its fields, the call's arguments,
// output and error as highlighted JSON, the call's retry ladder and, for
// a failure or cancellation, the cancellation causality.
type detailPane struct {
	c       *common
	sess    *session
	width   int
	height  int
	focused bool
	lines   []string
	offset  int
	built   detailKey
}

func newDetailPane(c *common) detailPane { return detailPane{c: c} }

// SetSize sets the pane's size, title line included.
func (p detailPane) SetSize(w, h int) detailPane {
	p.width, p.height = w, h
	return p.clampOffset()
}

func (p detailPane) rows() int { return max(0, p.height-1) }

func (p detailPane) clampOffset() detailPane {
	p.offset = max(0, min(p.offset, len(p.lines)-p.rows()))
	return p
}

// refresh rebuilds the lines when the selection changed. The root calls
// it after every update; it costs nothing when nothing changed.
func (p detailPane) refresh() detailPane {
	if p.sess == nil {
		p.lines = nil
		return p
	}
	h := p.sess.hist
	k := detailKey{sess: p.sess, gen: p.sess.gen, cursor: h.cursor(), dark: p.c.styles.IsDark}
	if e := h.selected(); e != nil {
		// A call's ladder grows while the cursor stays at the newest event.
		k.n = len(h.callEvents(e))
	}
	if k == p.built {
		return p
	}
	if k.cursor != p.built.cursor || k.sess != p.built.sess || k.gen != p.built.gen {
		p.offset = 0
	}
	p.built = k
	p.lines = detailLines(p.c, h, h.cursor())
	return p.clampOffset()
}

// detailLines describes event i of h.
func detailLines(c *common, h *history, i int) []string {
	st := c.styles
	e := h.at(i)
	if e == nil {
		return []string{st.Muted.Render("no event selected")}
	}
	var out []string
	head := st.Bold.Render(e.Kind.String()) + st.Muted.Render("  #"+strconv.FormatUint(e.Seq, 10))
	if len(h.events) > 0 {
		head += st.Muted.Render(fmt.Sprintf("  %+.3fs", e.Time.Sub(h.events[0].Time).Seconds()))
	}
	if e.Duration > 0 {
		head += st.Muted.Render("  took " + e.Duration.Round(time.Microsecond).String())
	}
	out = append(out, head)
	field := func(name, val string) {
		if val != "" {
			out = append(out, st.Muted.Render(fmt.Sprintf("%-9s", name))+val)
		}
	}
	field("site", e.Site.String())
	field("node", e.Node)
	field("tool", e.Tool)
	if e.Site.Attempt > 0 {
		a := strconv.Itoa(e.Site.Attempt)
		if e.Requested > 0 {
			a += " of " + strconv.Itoa(e.Requested)
		}
		field("attempt", a)
	}
	if e.Branch > 0 || (e.Branch == 0 && e.Kind == tracer.BranchOutcome) {
		field("branch", strconv.Itoa(e.Branch))
	}
	if e.DelayMS > 0 {
		field("backoff", formatMS(e.DelayMS))
	}
	field("reason", e.Reason)
	field("cause", e.Cause)
	if e.Error != nil {
		out = append(out, st.Muted.Render(fmt.Sprintf("%-9s", "error"))+st.Error.Render(e.Error.Type+": "+e.Error.Message))
	}
	if e.Outcome != nil {
		if e.Outcome.Success {
			field("outcome", st.Good.Render("success"))
		} else {
			field("outcome", st.Error.Render("failed: "+e.Outcome.ErrorType+": "+e.Outcome.ErrorMessage))
		}
	}
	if e.Counters != nil {
		field("budget", fmt.Sprintf("nodes %d, tool calls %d", e.Counters.Nodes, e.Counters.ToolCalls))
	}
	field("message", e.Message)

	// The ladder and the causality use every event received so far, so a
	// step shows what came of it. For a cancellation the cause comes first.
	known := h.len() - 1
	l := buildLadder(h, e, known)
	retried := false
	if l != nil && e.Kind == tracer.ToolAttemptEnd {
		if r := l.row(e.Site.Attempt); r != nil && r.backedOff {
			retried = true // a retried attempt failed nobody
		}
	}
	if l != nil && !retried && e.Kind == tracer.ToolAttemptEnd && e.Error != nil && l.exit == nil && l.cancel == nil &&
		strings.HasSuffix(l.stop, "pending") {
		retried = true // not known yet
	}
	var ladderLines, causeLines []string
	if l != nil {
		ladderLines = append([]string{""}, l.render(st, e.Site.Attempt)...)
	}
	if cz := buildCausality(h, e, known); cz != nil && !retried {
		causeLines = append([]string{""}, cz.render(st)...)
	}
	if e.Kind == tracer.Cancel {
		out = append(append(out, causeLines...), ladderLines...)
	} else {
		out = append(append(out, ladderLines...), causeLines...)
	}

	// The call's arguments: on this event, or on its attempt's start.
	args := e.Arguments
	if args == nil && (e.Kind == tracer.ToolAttemptEnd || e.Kind == tracer.RetryBackoffStart ||
		e.Kind == tracer.RetryBackoffEnd || e.Kind == tracer.Cancel) {
		if start := attemptStart(h, e, i); start != nil {
			args = start.Arguments
		}
	}
	if args != nil {
		out = append(out, "", st.Bold.Render("arguments"))
		out = append(out, c.hl.lines(st, args)...)
	}
	if e.HasOutput {
		out = append(out, "", st.Bold.Render("output"))
		out = append(out, c.hl.lines(st, e.Output)...)
	}
	if e.Error != nil {
		out = append(out, "", st.Bold.Render("error"))
		out = append(out, c.hl.lines(st, e.Error)...)
	}
	if e.Outcome != nil {
		out = append(out, "", st.Bold.Render("outcome"))
		out = append(out, c.hl.lines(st, e.Outcome)...)
	}
	if len(e.Data) > 0 && e.Kind != tracer.ReplayMismatch {
		out = append(out, "", st.Bold.Render("data"))
		out = append(out, c.hl.lines(st, e.Data)...)
	}
	return out
}

// attemptStart finds the tool.attempt.start of e's call, at e's attempt or
// the latest one before index i.
func attemptStart(h *history, e *tracer.Event, i int) *tracer.Event {
	idx := h.callEvents(e)
	var found *tracer.Event
	for _, j := range idx {
		if int(j) > i {
			break
		}
		ev := h.events[j]
		if ev.Kind == tracer.ToolAttemptStart && (e.Site.Attempt == 0 || ev.Site.Attempt == e.Site.Attempt) {
			found = ev
		}
	}
	return found
}

// Update scrolls the lines.
func (p detailPane) Update(msg tea.Msg) (detailPane, tea.Cmd) {
	if d, ok := isWheel(msg); ok {
		p.offset += 3 * d
		return p.clampOffset(), nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	km := p.c.keys
	switch {
	case key.Matches(k, km.Up):
		p.offset--
	case key.Matches(k, km.Down):
		p.offset++
	case key.Matches(k, km.PageUp):
		p.offset -= max(1, p.rows())
	case key.Matches(k, km.PageDown):
		p.offset += max(1, p.rows())
	case key.Matches(k, km.Top):
		p.offset = 0
	case key.Matches(k, km.Bottom):
		p.offset = len(p.lines)
	}
	return p.clampOffset(), nil
}

// View renders the title and the visible lines.
func (p detailPane) View() string {
	title := "Detail"
	if n := len(p.lines); n > p.rows() && p.rows() > 0 {
		title += fmt.Sprintf("  lines %d-%d of %d", p.offset+1, min(n, p.offset+p.rows()), n)
	}
	lines := []string{paneTitle(p.c.styles, title, p.focused, p.width)}
	end := min(len(p.lines), p.offset+p.rows())
	for _, l := range p.lines[min(p.offset, end):end] {
		lines = append(lines, " "+l)
	}
	return strings.Join(fitBlock(lines, p.width, p.height), "\n")
}

// ShortHelp lists the detail pane's own bindings.
func (p detailPane) ShortHelp() []key.Binding {
	return []key.Binding{p.c.keys.Up, p.c.keys.Down, p.c.keys.PageDown}
}

// FullHelp lists the detail pane's bindings.
func (p detailPane) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}}
}
