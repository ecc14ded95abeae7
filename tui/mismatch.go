package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// mismatchPane shows a replay mismatch: the expected fixture entry and the
// actual call side by side, differing fields marked, the drift named, and
// offers to accept the actual call as the new fixture entry.
type mismatchPane struct {
	c       *common
	sess    *session
	width   int
	height  int
	focused bool
	offset  int
	pending uint64 // seq whose acceptance is in progress
	errText string
}

func newMismatchPane(c *common) mismatchPane { return mismatchPane{c: c} }

// SetSize sets the pane's size, title line included.
func (p mismatchPane) SetSize(w, h int) mismatchPane {
	p.width, p.height = w, h
	return p
}

func (p mismatchPane) rows() int { return max(0, p.height-1) }

// event returns the selected mismatch event, or nil.
func (p mismatchPane) event() *tracer.Event {
	if p.sess == nil {
		return nil
	}
	if e := p.sess.hist.selected(); e != nil && e.Kind == tracer.ReplayMismatch {
		return e
	}
	return nil
}

// canAccept reports whether the selected mismatch can be accepted now.
func (p mismatchPane) canAccept() bool {
	e := p.event()
	return e != nil && p.sess.spec.AcceptMismatch != nil && !p.sess.accepted[e.Seq] && p.pending == 0
}

// accept starts AcceptMismatch for the selected event in a command.
func (p mismatchPane) accept() (mismatchPane, tea.Cmd) {
	if !p.canAccept() {
		return p, nil
	}
	e := p.event()
	p.pending = e.Seq
	p.errText = ""
	f := p.sess.spec.AcceptMismatch
	sid, gen := p.sess.id, p.sess.gen
	p.sess.note = "accepting the actual call…"
	return p, func() tea.Msg {
		return acceptedMsg{sid: sid, gen: gen, seq: e.Seq, err: f(e)}
	}
}

// Update scrolls, and records the result of an acceptance: on success the
// replay goes on (Continue).
func (p mismatchPane) Update(msg tea.Msg) (mismatchPane, tea.Cmd) {
	switch msg := msg.(type) {
	case acceptedMsg:
		if p.sess == nil || msg.sid != p.sess.id || msg.gen != p.sess.gen {
			return p, nil
		}
		p.pending = 0
		if msg.err != nil {
			p.errText = msg.err.Error()
			p.sess.note = "accept failed: " + firstLine(msg.err.Error())
			return p, nil
		}
		p.sess.accepted[msg.seq] = true
		p.sess.cont()
		p.sess.note = "accepted the actual call; replay continues"
		return p, nil
	case tea.KeyPressMsg:
		km := p.c.keys
		switch {
		case key.Matches(msg, km.Up):
			p.offset--
		case key.Matches(msg, km.Down):
			p.offset++
		case key.Matches(msg, km.PageUp):
			p.offset -= max(1, p.rows())
		case key.Matches(msg, km.PageDown):
			p.offset += max(1, p.rows())
		case key.Matches(msg, km.Top):
			p.offset = 0
		}
	}
	if d, ok := isWheel(msg); ok {
		p.offset += 3 * d
	}
	p.offset = max(0, p.offset)
	return p, nil
}

// normalize turns any value into plain decoded JSON (maps, slices,
// json.Number), so typed Data from a live run and decoded Data from a
// trace render alike.
func normalize(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

// diffEntry is one differing field.
type diffEntry struct {
	path, kind       string
	expected, actual any
}

// mismatchData is the decoded Data of a replay.mismatch event.
type mismatchData struct {
	entry            string
	drift            string
	detail           string
	expected, actual any
	diffs            []diffEntry
}

func decodeMismatch(e *tracer.Event) mismatchData {
	var d mismatchData
	m, _ := normalize(e.Data).(map[string]any)
	if v, ok := m["entry"]; ok && v != nil {
		d.entry = fmt.Sprint(v)
	}
	d.drift, _ = m["drift"].(string)
	d.detail, _ = m["detail"].(string)
	d.expected = m["expected"]
	d.actual = m["actual"]
	list, _ := m["diff"].([]any)
	for _, it := range list {
		dm, _ := it.(map[string]any)
		if dm == nil {
			continue
		}
		var de diffEntry
		de.path, _ = dm["path"].(string)
		de.kind, _ = dm["kind"].(string)
		de.expected, de.actual = dm["expected"], dm["actual"]
		de.path = normPath(de.path)
		d.diffs = append(d.diffs, de)
	}
	return d
}

// normPath turns "a.b[0]" or "/a/b/0" into "/a/b/0".
func normPath(p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	p = strings.NewReplacer("[", ".", "]", "").Replace(p)
	return "/" + strings.ReplaceAll(strings.Trim(p, "."), ".", "/")
}

// pline is one pretty-printed JSON line and the path of the value on it.
type pline struct{ text, path string }

func prettyPaths(v any, path, ind, lead, comma string, out []pline) []pline {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return append(out, pline{lead + "{}" + comma, path})
		}
		out = append(out, pline{lead + "{", path})
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			c := ","
			if i == len(keys)-1 {
				c = ""
			}
			out = prettyPaths(x[k], path+"/"+k, ind+"  ", ind+"  "+strconv.Quote(k)+": ", c, out)
		}
		return append(out, pline{ind + "}" + comma, path})
	case []any:
		if len(x) == 0 {
			return append(out, pline{lead + "[]" + comma, path})
		}
		out = append(out, pline{lead + "[", path})
		for i, it := range x {
			c := ","
			if i == len(x)-1 {
				c = ""
			}
			out = prettyPaths(it, path+"/"+strconv.Itoa(i), ind+"  ", ind+"  ", c, out)
		}
		return append(out, pline{ind + "]" + comma, path})
	}
	data, _ := json.Marshal(v)
	return append(out, pline{lead + string(data) + comma, path})
}

// differs reports whether the value at path is, or lies inside, a
// differing field.
func differs(path string, diffs []diffEntry) bool {
	for _, d := range diffs {
		if d.path == "" {
			continue
		}
		if path == d.path || strings.HasPrefix(path, d.path+"/") {
			return true
		}
	}
	return false
}

// side renders one column: each line marked "!" and highlighted when it
// differs.
func (p mismatchPane) side(v any, diffs []diffEntry, width int, hl func(...string) string, missing string) []string {
	if v == nil {
		return []string{p.c.styles.Muted.Render(missing)}
	}
	var out []string
	for _, l := range prettyPaths(v, "", "", "", "", nil) {
		if differs(l.path, diffs) && l.path != "" {
			out = append(out, hl(fitLine("! "+l.text, width)))
		} else {
			out = append(out, fitLine("  "+l.text, width))
		}
	}
	return out
}

// lines builds the whole view below the title.
func (p mismatchPane) lines() []string {
	st := p.c.styles
	e := p.event()
	if e == nil {
		return nil
	}
	d := decodeMismatch(e)
	drift := d.drift
	if drift == "" {
		drift = "unknown"
	}
	head := st.Accent.Render("Replay mismatch") + "  drift: " + st.Warn.Render(drift)
	if d.entry != "" {
		head += "  fixture entry " + d.entry
	}
	out := []string{head}
	switch {
	case p.sess.accepted[e.Seq]:
		out = append(out, st.Good.Render("✓ accepted: the actual call is the new fixture entry"))
	case p.pending == e.Seq:
		out = append(out, st.Muted.Render("accepting…"))
	case p.sess.spec.AcceptMismatch != nil:
		out = append(out, "press "+st.Accent.Render(p.c.keys.Accept.Help().Key)+" to accept the actual call as the new fixture entry and go on")
	}
	if p.errText != "" {
		out = append(out, st.Error.Render("accept failed: "+firstLine(p.errText)))
	}
	if e.Message != "" {
		out = append(out, firstLine(e.Message))
	}
	if d.detail != "" {
		out = append(out, st.Muted.Render(firstLine(d.detail)))
	}
	if e.Site.Path != "" {
		out = append(out, st.Muted.Render("site "+e.Site.String()))
	}
	colW := max(10, (p.width-4)/2)
	left := p.side(d.expected, d.diffs, colW, st.DiffExpected.Render, "(no fixture entry)")
	right := p.side(d.actual, d.diffs, colW, st.DiffActual.Render, "(no actual call)")
	out = append(out, "")
	out = append(out, st.Bold.Render(fitLine("expected (fixture)", colW))+" │ "+st.Bold.Render("actual call"))
	for i := range max(len(left), len(right)) {
		l, r := strings.Repeat(" ", colW), ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out = append(out, l+" │ "+r)
	}
	if len(d.diffs) > 0 {
		out = append(out, "", st.Bold.Render("differences"))
		for _, df := range d.diffs {
			line := fmt.Sprintf("  %s  expected %s  actual %s", df.path, compactJSON(df.expected, 40), compactJSON(df.actual, 40))
			if df.kind != "" {
				line += "  (" + df.kind + ")"
			}
			out = append(out, line)
		}
	}
	return out
}

// View renders the title and the visible part of the comparison.
func (p mismatchPane) View() string {
	lines := []string{paneTitle(p.c.styles, "Mismatch", p.focused, p.width)}
	body := p.lines()
	off := max(0, min(p.offset, len(body)-p.rows()))
	end := min(len(body), off+p.rows())
	for _, l := range body[min(off, end):end] {
		lines = append(lines, " "+l)
	}
	return strings.Join(fitBlock(lines, p.width, p.height), "\n")
}

// ShortHelp lists the mismatch pane's own bindings.
func (p mismatchPane) ShortHelp() []key.Binding {
	return []key.Binding{p.c.keys.Accept, p.c.keys.Continue}
}

// FullHelp lists the mismatch pane's bindings.
func (p mismatchPane) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Accept, k.Continue, k.Up, k.Down}}
}
