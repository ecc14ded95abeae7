package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/treelang/treelang/tracer"
)

// treePane shows the program tree, pre-order, each node with its status as
// of the cursor and its attempt count.
type treePane struct {
	c       *common
	sess    *session
	sel     int // selected node
	offset  int // first visible node
	shown   int // the cursor last revealed
	width   int
	height  int
	focused bool
}

func newTreePane(c *common) treePane { return treePane{c: c} }

// SetSize sets the pane's size, title line included.
func (p treePane) SetSize(w, h int) treePane {
	if w == p.width && h == p.height {
		return p
	}
	p.width, p.height = w, h
	return p.clamp()
}

func (p treePane) rows() int { return max(0, p.height-1) }

func (p treePane) clamp() treePane {
	n := 0
	if p.sess != nil {
		n = len(p.sess.hist.nodes)
	}
	p.sel = max(0, min(p.sel, n-1))
	if p.sel < p.offset {
		p.offset = p.sel
	}
	if r := p.rows(); r > 0 && p.sel >= p.offset+r {
		p.offset = p.sel - r + 1
	}
	p.offset = max(0, min(p.offset, n-p.rows()))
	return p
}

// selectedNode returns the selected outline node, or false.
func (p treePane) selectedNode() (OutlineNode, bool) {
	if p.sess == nil || p.sel >= len(p.sess.hist.nodes) || len(p.sess.hist.nodes) == 0 {
		return OutlineNode{}, false
	}
	return p.sess.hist.nodes[p.sel], true
}

// reveal selects the node of the event at the cursor, once per cursor
// move, so that scrolling the tree is not undone.
func (p treePane) reveal() treePane {
	if p.sess == nil || p.sess.hist.cursor() == p.shown {
		return p
	}
	p.shown = p.sess.hist.cursor()
	e := p.sess.hist.selected()
	if e == nil {
		return p
	}
	if i, ok := p.sess.hist.pathIdx[e.Site.Path]; ok {
		p.sel = int(i)
	}
	return p.clamp()
}

// Update moves the selection; enter moves the cursor to the selected
// node's next event.
func (p treePane) Update(msg tea.Msg) (treePane, tea.Cmd) {
	if p.sess == nil {
		return p, nil
	}
	if d, ok := isWheel(msg); ok {
		p.offset = max(0, min(p.offset+3*d, len(p.sess.hist.nodes)-p.rows()))
		return p, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	km := p.c.keys
	switch {
	case key.Matches(k, km.Up):
		p.sel--
	case key.Matches(k, km.Down):
		p.sel++
	case key.Matches(k, km.PageUp):
		p.sel -= max(1, p.rows())
	case key.Matches(k, km.PageDown):
		p.sel += max(1, p.rows())
	case key.Matches(k, km.Top):
		p.sel = 0
	case key.Matches(k, km.Bottom):
		p.sel = len(p.sess.hist.nodes) - 1
	case key.Matches(k, km.Select):
		if n, ok := p.selectedNode(); ok {
			h := p.sess.hist
			at := func(e *tracer.Event) bool { return e.Site.Path == n.Path }
			i := h.next(h.cursor(), at)
			if i < 0 {
				i = h.next(-1, at)
			}
			if i >= 0 {
				h.seek(i)
				p.sess.note = ""
			} else {
				p.sess.note = "no event at " + n.Path + " yet"
			}
		}
	}
	return p.clamp(), nil
}

// hasNodeBreakpoint reports whether a node breakpoint is set on path.
func (p treePane) hasNodeBreakpoint(path string) bool {
	for _, b := range p.sess.bps {
		if b.Kind == tracer.BreakNode && b.Path == path && !b.Disabled {
			return true
		}
	}
	return false
}

// View renders the title and the visible nodes only.
func (p treePane) View() string {
	st := p.c.styles
	lines := make([]string, 0, p.height)
	title := "Program"
	if p.sess != nil {
		title += " (" + strconv.Itoa(len(p.sess.hist.nodes)) + " nodes)"
	}
	lines = append(lines, paneTitle(st, title, p.focused, p.width))
	if p.sess != nil {
		h := p.sess.hist
		if len(h.nodes) == 0 {
			lines = append(lines, st.Muted.Render(" no program outline"))
		}
		end := min(len(h.nodes), p.offset+p.rows())
		for i := p.offset; i < end; i++ {
			n := h.nodes[i]
			ns := h.view[i]
			var b strings.Builder
			if i == p.sel {
				b.WriteString("›")
			} else {
				b.WriteByte(' ')
			}
			if p.hasNodeBreakpoint(n.Path) {
				b.WriteString(st.Error.Render("●"))
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(strings.Repeat("  ", max(0, n.Depth)))
			sst := st.Status[ns.status]
			b.WriteString(sst.Render(statusGlyphs[ns.status]))
			b.WriteByte(' ')
			label := n.Label
			if label == "" {
				label = n.Type
			}
			b.WriteString(label)
			if n.Type != "" && n.Type != label {
				b.WriteString(st.Muted.Render(" " + n.Type))
			}
			if ns.attempts > 1 {
				b.WriteString(st.Warn.Render(" ×" + strconv.Itoa(int(ns.attempts))))
			}
			if ns.status != statusPending {
				b.WriteString(" " + sst.Render(ns.status.String()))
			}
			line := fitLine(b.String(), p.width)
			if i == p.sel {
				line = selectRow(st, line, p.focused)
			}
			lines = append(lines, line)
		}
	}
	return strings.Join(fitBlock(lines, p.width, p.height), "\n")
}

// ShortHelp lists the tree's own bindings.
func (p treePane) ShortHelp() []key.Binding {
	return []key.Binding{p.c.keys.Up, p.c.keys.Down, p.c.keys.Select, p.c.keys.Break}
}

// FullHelp lists the tree's bindings in one column.
func (p treePane) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Select}}
}
