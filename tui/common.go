package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// common is what every pane shares with the root: the key map (whose
// bindings the root enables and disables), the styles of the current theme
// and the JSON highlighter.
type common struct {
	keys   *KeyMap
	styles *Styles
	hl     highlighter
}

// pane is the small interface every pane and dialog implements: Update
// returns the pane's own type, View renders exactly the size last set, and
// the help.KeyMap lists the bindings that act on it.
type pane[T any] interface {
	Update(msg tea.Msg) (T, tea.Cmd)
	View() string
	SetSize(width, height int) T
	help.KeyMap
}

// Compile-time checks that each pane implements pane.
var (
	_ pane[treePane]        = treePane{}
	_ pane[timelinePane]    = timelinePane{}
	_ pane[detailPane]      = detailPane{}
	_ pane[mismatchPane]    = mismatchPane{}
	_ pane[statusBar]       = statusBar{}
	_ pane[breakpointsPane] = breakpointsPane{}
	_ pane[saveDialog]      = saveDialog{}
)

// fitLine truncates or pads s to exactly width cells.
func fitLine(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		s = ansi.Truncate(s, width, "…")
		w = ansi.StringWidth(s)
	}
	if w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// fitBlock makes lines exactly width x height.
func fitBlock(lines []string, width, height int) []string {
	out := make([]string, height)
	for i := range out {
		var l string
		if i < len(lines) {
			l = lines[i]
		}
		out[i] = fitLine(l, width)
	}
	return out
}

// title renders a pane's title line.
func paneTitle(st *Styles, text string, focused bool, width int) string {
	if focused {
		return fitLine(st.PaneTitleFocused.Render("▌"+text), width)
	}
	return fitLine(st.PaneTitle.Render(" "+text), width)
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// isWheel reports whether msg is a mouse wheel event and its direction
// (-1 up, +1 down).
func isWheel(msg tea.Msg) (int, bool) {
	w, ok := msg.(tea.MouseWheelMsg)
	if !ok {
		return 0, false
	}
	switch w.Button {
	case tea.MouseWheelUp:
		return -1, true
	case tea.MouseWheelDown:
		return 1, true
	}
	return 0, false
}

// selectRow renders a selected row: reverse video over the plain text, so
// the selection shows without color too.
func selectRow(st *Styles, line string, focused bool) string {
	plain := ansi.Strip(line)
	if focused {
		return st.Selected.Render(plain)
	}
	return st.SelectedBlurred.Render(plain)
}
