package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// filterSpec is a parsed timeline query: space-separated terms, each
// kind:PREFIX (event kind, such as kind:tool or kind:cancel), tool:NAME,
// site:PATH-PREFIX, is:error, or free text matched case-insensitively
// against the kind, tool, site, node type, message, reason and error.
// Every term must match.
type filterSpec struct {
	raw     string
	kinds   []string
	tools   []string
	sites   []string
	errOnly bool
	text    []string
}

func parseFilter(q string) filterSpec {
	f := filterSpec{raw: strings.TrimSpace(q)}
	for _, term := range strings.Fields(q) {
		name, val, ok := strings.Cut(term, ":")
		switch {
		case ok && name == "kind" && val != "":
			f.kinds = append(f.kinds, strings.ToLower(val))
		case ok && name == "tool" && val != "":
			f.tools = append(f.tools, val)
		case ok && name == "site" && val != "":
			f.sites = append(f.sites, val)
		case ok && name == "is" && (val == "error" || val == "failure" || val == "failed"):
			f.errOnly = true
		default:
			f.text = append(f.text, term)
		}
	}
	return f
}

func (f filterSpec) active() bool { return f.raw != "" }

func (f filterSpec) match(e *tracer.Event) bool {
	if len(f.kinds) > 0 {
		k := e.Kind.String()
		ok := false
		for _, p := range f.kinds {
			ok = ok || strings.HasPrefix(k, p)
		}
		if !ok {
			return false
		}
	}
	if len(f.tools) > 0 {
		ok := false
		for _, t := range f.tools {
			ok = ok || e.Tool == t
		}
		if !ok {
			return false
		}
	}
	if len(f.sites) > 0 {
		ok := false
		for _, s := range f.sites {
			ok = ok || strings.HasPrefix(e.Site.Path, s)
		}
		if !ok {
			return false
		}
	}
	if f.errOnly && !isFailure(e) {
		return false
	}
	for _, t := range f.text {
		if !eventContains(e, t) {
			return false
		}
	}
	return true
}

func eventContains(e *tracer.Event, t string) bool {
	if containsFold(e.Kind.String(), t) || containsFold(e.Tool, t) || containsFold(e.Site.Path, t) ||
		containsFold(e.Node, t) || containsFold(e.Message, t) || containsFold(e.Reason, t) {
		return true
	}
	if e.Error != nil && (containsFold(e.Error.Type, t) || containsFold(e.Error.Message, t)) {
		return true
	}
	return false
}

// containsFold reports whether sub is in s, ignoring case, without
// allocating.
func containsFold(s, sub string) bool {
	n := len(sub)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

// timelinePane lists every event received, one row each. Only the visible
// rows are rendered, so drawing costs the same for ten events or a
// million. A filter narrows the rows; the selected row is the cursor.
type timelinePane struct {
	c       *common
	sess    *session
	width   int
	height  int
	focused bool

	offset     int // first visible row
	lastCursor int
	lastGen    int

	filter   filterSpec
	filtered []int32 // indices of matching events, when the filter is active
	scanned  int     // events already checked against the filter

	searching bool
	input     textinput.Model
}

func newTimelinePane(c *common) timelinePane {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "kind:tool tool:NAME site:/body/0 is:error text"
	in.SetStyles(c.styles.Input)
	return timelinePane{c: c, input: in, lastCursor: -1}
}

// SetSize sets the pane's size, title line included.
func (p timelinePane) SetSize(w, h int) timelinePane {
	if w == p.width && h == p.height {
		return p
	}
	p.width, p.height = w, h
	p.input.SetWidth(max(1, w-2))
	return p.ensureVisible()
}

// rows is how many event rows fit.
func (p timelinePane) rows() int {
	r := p.height - 1
	if p.searching {
		r--
	}
	return max(0, r)
}

// count is how many rows the list has.
func (p timelinePane) count() int {
	if p.sess == nil {
		return 0
	}
	if p.filter.active() {
		return len(p.filtered)
	}
	return p.sess.hist.len()
}

// eventAt returns the event index of row r.
func (p timelinePane) eventAt(r int) int {
	if p.filter.active() {
		return int(p.filtered[r])
	}
	return r
}

// rowOf returns the row of event i, or of the first row after it.
func (p timelinePane) rowOf(i int) int {
	if !p.filter.active() {
		return i
	}
	return sort.Search(len(p.filtered), func(j int) bool { return int(p.filtered[j]) >= i })
}

// sync brings the filter up to date with new events and scrolls the
// cursor into view when it moved. The root calls it after every update.
func (p timelinePane) sync() timelinePane {
	if p.sess == nil {
		return p
	}
	h := p.sess.hist
	if p.lastGen != p.sess.gen {
		p.lastGen = p.sess.gen
		p.filtered, p.scanned, p.offset, p.lastCursor = p.filtered[:0], 0, 0, -1
	}
	if p.filter.active() {
		for ; p.scanned < h.len(); p.scanned++ {
			if p.filter.match(h.events[p.scanned]) {
				p.filtered = append(p.filtered, int32(p.scanned))
			}
		}
	}
	if c := h.cursor(); c != p.lastCursor {
		p.lastCursor = c
		p = p.ensureVisible()
	}
	return p
}

func (p timelinePane) ensureVisible() timelinePane {
	if p.sess == nil {
		return p
	}
	r := p.rowOf(p.sess.hist.cursor())
	n := p.rows()
	if r < p.offset {
		p.offset = r
	}
	if n > 0 && r >= p.offset+n {
		p.offset = r - n + 1
	}
	p.offset = max(0, min(p.offset, p.count()-n))
	return p
}

// setFilter applies a query and moves the cursor to the first match at or
// after it.
func (p timelinePane) setFilter(q string) timelinePane {
	p.filter = parseFilter(q)
	p.filtered, p.scanned = nil, 0
	p = p.sync()
	if p.filter.active() && p.sess != nil {
		h := p.sess.hist
		if c := h.cursor(); c >= 0 && !p.filter.match(h.at(c)) {
			if i := h.next(c, p.filter.match); i >= 0 {
				h.seek(i)
			} else if i := h.prev(c, p.filter.match); i >= 0 {
				h.seek(i)
			}
		}
		p.sess.note = fmt.Sprintf("filter %q: %d events", p.filter.raw, len(p.filtered))
	}
	return p.sync().ensureVisible()
}

// openSearch focuses the query input.
func (p timelinePane) openSearch() (timelinePane, tea.Cmd) {
	p.searching = true
	p.input.SetValue(p.filter.raw)
	p.input.CursorEnd()
	cmd := p.input.Focus()
	return p.ensureVisible(), cmd
}

// match moves the cursor to the next (dir 1) or previous (dir -1) event
// matching the filter.
func (p timelinePane) match(dir int) timelinePane {
	if p.sess == nil || !p.filter.active() {
		return p
	}
	h := p.sess.hist
	var i int
	if dir > 0 {
		i = h.next(h.cursor(), p.filter.match)
	} else {
		i = h.prev(h.cursor(), p.filter.match)
	}
	if i < 0 {
		p.sess.note = "no further match for " + strconv.Quote(p.filter.raw)
		return p
	}
	h.seek(i)
	p.sess.note = ""
	return p.sync()
}

// moveRows moves the cursor by n visible rows.
func (p timelinePane) moveRows(n int) timelinePane {
	cnt := p.count()
	if cnt == 0 {
		return p
	}
	h := p.sess.hist
	r := p.rowOf(h.cursor())
	if p.filter.active() && (r >= cnt || int(p.filtered[r]) != h.cursor()) && n > 0 {
		n-- // the cursor sits between rows: the next row is one step away
	}
	r = max(0, min(r+n, cnt-1))
	h.seek(p.eventAt(r))
	p.sess.hit = nil
	return p.sync()
}

// clickRow selects the row at y lines below the title.
func (p timelinePane) clickRow(y int) timelinePane {
	r := p.offset + y
	if y < 0 || y >= p.rows() || r >= p.count() {
		return p
	}
	p.sess.hist.seek(p.eventAt(r))
	return p.sync()
}

// Update handles the query input while it is open, else navigation.
func (p timelinePane) Update(msg tea.Msg) (timelinePane, tea.Cmd) {
	if p.sess == nil {
		return p, nil
	}
	km := p.c.keys
	if p.searching {
		if k, ok := msg.(tea.KeyPressMsg); ok {
			switch {
			case key.Matches(k, km.Submit):
				p.searching = false
				p.input.Blur()
				return p.setFilter(p.input.Value()), nil
			case key.Matches(k, km.Dismiss):
				p.searching = false
				p.input.Blur()
				return p.ensureVisible(), nil
			}
		}
		var cmd tea.Cmd
		p.input, cmd = p.input.Update(msg)
		return p, cmd
	}
	if d, ok := isWheel(msg); ok {
		p.offset = max(0, min(p.offset+3*d, p.count()-p.rows()))
		return p, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	switch {
	case key.Matches(k, km.Up):
		p = p.moveRows(-1)
	case key.Matches(k, km.Down):
		p = p.moveRows(1)
	case key.Matches(k, km.PageUp):
		p = p.moveRows(-max(1, p.rows()))
	case key.Matches(k, km.PageDown):
		p = p.moveRows(max(1, p.rows()))
	case key.Matches(k, km.Top):
		p = p.moveRows(-p.count())
	case key.Matches(k, km.Bottom):
		p = p.moveRows(p.count())
	}
	return p, nil
}

// View renders the title, the visible rows and, while searching, the input.
func (p timelinePane) View() string {
	st := p.c.styles
	lines := make([]string, 0, p.height)
	title := "Timeline"
	if p.sess != nil {
		h := p.sess.hist
		title = fmt.Sprintf("Timeline  %d/%d", h.cursor()+1, h.len())
		if p.filter.active() {
			title += fmt.Sprintf("  filter %q: %d", p.filter.raw, len(p.filtered))
		}
	}
	lines = append(lines, paneTitle(st, title, p.focused, p.width))
	if p.sess != nil {
		h := p.sess.hist
		var t0 time.Time
		if h.len() > 0 {
			t0 = h.events[0].Time
		}
		seqW := len(strconv.FormatUint(uint64(h.len()), 10))
		end := min(p.count(), p.offset+p.rows())
		cur := h.cursor()
		for r := p.offset; r < end; r++ {
			i := p.eventAt(r)
			line := p.row(h.events[i], t0, seqW, i == cur)
			if i == cur {
				line = selectRow(st, fitLine(line, p.width), p.focused)
			}
			lines = append(lines, line)
		}
		if h.len() == 0 {
			msg := " waiting for the first event…"
			if !p.sess.canRun() {
				msg = " no events"
			}
			lines = append(lines, st.Muted.Render(msg))
		}
	}
	out := fitBlock(lines, p.width, p.height)
	if p.searching && p.height > 0 {
		out[len(out)-1] = fitLine(p.input.View(), p.width)
	}
	return strings.Join(out, "\n")
}

// kindGlyph marks a row's kind at a glance.
func kindGlyph(st *Styles, e *tracer.Event) string {
	switch {
	case e.Kind == tracer.ReplayMismatch:
		return st.Accent.Render("≠")
	case e.Kind == tracer.Cancel:
		return st.Status[statusCancelled].Render("⊘")
	case e.Kind == tracer.RetryBackoffStart || e.Kind == tracer.RetryBackoffEnd:
		return st.Warn.Render("↻")
	case isFailure(e):
		return st.Error.Render("✗")
	case e.Kind == tracer.BranchOutcome:
		return st.Good.Render("✓")
	case e.Kind == tracer.ToolAttemptEnd, e.Kind == tracer.NodeExit:
		return st.Good.Render("✓")
	case e.Kind == tracer.ToolAttemptStart, e.Kind == tracer.NodeEnter:
		return st.Status[statusRunning].Render("▸")
	}
	return st.Muted.Render("•")
}

// row renders one event row.
func (p timelinePane) row(e *tracer.Event, t0 time.Time, seqW int, cur bool) string {
	st := p.c.styles
	var b strings.Builder
	if cur {
		b.WriteString("▶")
	} else if p.hasBreakpointAt(e) {
		b.WriteString(st.Error.Render("●"))
	} else {
		b.WriteByte(' ')
	}
	seq := strconv.FormatUint(e.Seq, 10)
	b.WriteString(strings.Repeat(" ", max(0, seqW-len(seq))))
	b.WriteString(st.Muted.Render(seq))
	b.WriteByte(' ')
	b.WriteString(st.Muted.Render(fmt.Sprintf("%+8.3fs", e.Time.Sub(t0).Seconds())))
	b.WriteByte(' ')
	b.WriteString(kindGlyph(st, e))
	b.WriteByte(' ')
	kind := e.Kind.String()
	b.WriteString(kind)
	b.WriteString(strings.Repeat(" ", max(1, 20-len(kind))))
	b.WriteString(e.Site.String())
	if e.Tool != "" {
		b.WriteString(" " + st.Accent.Render(e.Tool))
	}
	if s := eventSummary(e); s != "" {
		b.WriteString("  ")
		if isFailure(e) && e.Kind != tracer.RetryBackoffStart && e.Kind != tracer.RetryBackoffEnd {
			b.WriteString(st.Error.Render(s))
		} else {
			b.WriteString(st.Muted.Render(s))
		}
	}
	return b.String()
}

// hasBreakpointAt reports whether a user breakpoint matches e.
func (p timelinePane) hasBreakpointAt(e *tracer.Event) bool {
	return matchBreakpoint(p.sess.bps, e) != nil
}

// compactJSON renders v on one line, cut to n bytes.
func compactJSON(v any, n int) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	if len(data) > n {
		return string(data[:n]) + "…"
	}
	return string(data)
}

// eventSummary is the short text after a row's site and tool.
func eventSummary(e *tracer.Event) string {
	if e.Kind == tracer.RetryBackoffStart {
		return "backoff " + formatMS(e.DelayMS)
	}
	if e.Error != nil {
		return e.Error.Type + ": " + firstLine(e.Error.Message)
	}
	switch e.Kind {
	case tracer.NodeEnter:
		return e.Node
	case tracer.ToolAttemptStart:
		if e.Arguments != nil {
			return compactJSON(e.Arguments, 60)
		}
	case tracer.ToolAttemptEnd, tracer.NodeExit, tracer.RunEnd:
		if e.HasOutput {
			return "→ " + compactJSON(e.Output, 60)
		}
	case tracer.RetryBackoffStart:
		return "backoff " + formatMS(e.DelayMS)
	case tracer.Cancel:
		s := e.Reason
		if e.Cause != "" {
			s += " by " + e.Cause
		}
		return s
	case tracer.BranchOutcome:
		if e.Outcome != nil {
			if e.Outcome.Success {
				return fmt.Sprintf("branch %d ok", e.Branch)
			}
			return fmt.Sprintf("branch %d failed: %s: %s", e.Branch, e.Outcome.ErrorType, e.Outcome.ErrorMessage)
		}
	}
	return firstLine(e.Message)
}

func formatMS(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', -1, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
}

// ShortHelp lists the timeline's own bindings.
func (p timelinePane) ShortHelp() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Up, k.Down, k.Search, k.NextMatch, k.PrevMatch, k.ClearFilter}
}

// FullHelp lists the timeline's bindings.
func (p timelinePane) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Search, k.NextMatch, k.PrevMatch, k.ClearFilter}}
}
