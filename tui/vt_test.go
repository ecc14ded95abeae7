package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// vt is a minimal terminal emulator for flow tests: it applies the
// renderer's cursor moves, erases and text to a grid, so a test can wait
// for what a user would see rather than for bytes in the stream (the
// renderer only writes the cells that change).
type vt struct {
	w, h     int
	cells    [][]string
	row, col int
	top, bot int // scroll region, inclusive
	state    byte
	p        *ansi.Parser
	pending  []byte
}

func newVT(w, h int) *vt {
	v := &vt{w: w, h: h, p: ansi.NewParser(), top: 0, bot: h - 1}
	v.cells = make([][]string, h)
	for i := range v.cells {
		v.cells[i] = v.blank()
	}
	return v
}

func (v *vt) blank() []string {
	l := make([]string, v.w)
	for i := range l {
		l[i] = " "
	}
	return l
}

func (v *vt) clamp() {
	v.row = max(0, min(v.row, v.h-1))
	v.col = max(0, min(v.col, v.w-1))
}

func (v *vt) lineFeed() {
	if v.row == v.bot {
		v.scrollUp(1)
		return
	}
	v.row = min(v.row+1, v.h-1)
}

func (v *vt) scrollUp(n int) {
	for range n {
		copy(v.cells[v.top:v.bot], v.cells[v.top+1:v.bot+1])
		v.cells[v.bot] = v.blank()
	}
}

func (v *vt) scrollDown(n int) {
	for range n {
		copy(v.cells[v.top+1:v.bot+1], v.cells[v.top:v.bot])
		v.cells[v.top] = v.blank()
	}
}

// Write feeds output to the emulator.
func (v *vt) Write(b []byte) {
	data := append(v.pending, b...)
	v.pending = nil
	for len(data) > 0 {
		seq, width, n, state := ansi.DecodeSequence(data, v.state, v.p)
		if n == 0 {
			break
		}
		if state != ansi.NormalState && n == len(data) {
			// An incomplete sequence: keep it for the next write.
			v.pending = append([]byte(nil), data...)
			v.state = ansi.NormalState
			return
		}
		v.state = state
		data = data[n:]
		switch {
		case width > 0:
			if v.col+width > v.w {
				v.col = 0
				v.lineFeed()
			}
			v.cells[v.row][v.col] = string(seq)
			for i := 1; i < width && v.col+i < v.w; i++ {
				v.cells[v.row][v.col+i] = ""
			}
			v.col = min(v.col+width, v.w-1+width)
			if v.col >= v.w {
				v.col = v.w - 1
			}
		case len(seq) == 1 && seq[0] == '\r':
			v.col = 0
		case len(seq) == 1 && seq[0] == '\n':
			v.col = 0
			v.lineFeed()
		case len(seq) == 1 && seq[0] == '\b':
			v.col = max(0, v.col-1)
		case ansi.HasCsiPrefix(seq):
			v.csi()
		case len(seq) == 2 && seq[0] == 0x1b && seq[1] == 'M':
			if v.row == v.top {
				v.scrollDown(1)
			} else {
				v.row--
			}
		}
	}
}

func (v *vt) csi() {
	cmd := ansi.Cmd(v.p.Command())
	if cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return // private modes and queries
	}
	param := func(i, def int) int {
		n, _ := v.p.Param(i, def)
		if n == 0 {
			n = def
		}
		return n
	}
	switch cmd.Final() {
	case 'H', 'f':
		v.row, v.col = param(0, 1)-1, param(1, 1)-1
	case 'G', '`':
		v.col = param(0, 1) - 1
	case 'd':
		v.row = param(0, 1) - 1
	case 'A':
		v.row -= param(0, 1)
	case 'B':
		v.row += param(0, 1)
	case 'C':
		v.col += param(0, 1)
	case 'D':
		v.col -= param(0, 1)
	case 'E':
		v.row += param(0, 1)
		v.col = 0
	case 'F':
		v.row -= param(0, 1)
		v.col = 0
	case 'X':
		for i := 0; i < param(0, 1) && v.col+i < v.w; i++ {
			v.cells[v.row][v.col+i] = " "
		}
	case 'K':
		n, _ := v.p.Param(0, 0)
		from, to := v.col, v.w
		switch n {
		case 1:
			from, to = 0, v.col+1
		case 2:
			from = 0
		}
		for i := from; i < to && i < v.w; i++ {
			v.cells[v.row][i] = " "
		}
	case 'J':
		n, _ := v.p.Param(0, 0)
		switch n {
		case 2, 3:
			for i := range v.cells {
				v.cells[i] = v.blank()
			}
		case 0:
			for i := v.col; i < v.w; i++ {
				v.cells[v.row][i] = " "
			}
			for r := v.row + 1; r < v.h; r++ {
				v.cells[r] = v.blank()
			}
		case 1:
			for r := 0; r < v.row; r++ {
				v.cells[r] = v.blank()
			}
		}
	case 'S':
		v.scrollUp(param(0, 1))
	case 'T':
		v.scrollDown(param(0, 1))
	case 'L':
		top := v.top
		v.top = v.row
		v.scrollDown(param(0, 1))
		v.top = top
	case 'M':
		top := v.top
		v.top = v.row
		v.scrollUp(param(0, 1))
		v.top = top
	case '@':
		n := param(0, 1)
		line := v.cells[v.row]
		for i := v.w - 1; i >= v.col+n; i-- {
			line[i] = line[i-n]
		}
		for i := v.col; i < v.col+n && i < v.w; i++ {
			line[i] = " "
		}
	case 'P':
		n := param(0, 1)
		line := v.cells[v.row]
		for i := v.col; i < v.w; i++ {
			if i+n < v.w {
				line[i] = line[i+n]
			} else {
				line[i] = " "
			}
		}
	case 'r':
		v.top, v.bot = param(0, 1)-1, param(1, v.h)-1
		v.top = max(0, min(v.top, v.h-1))
		v.bot = max(v.top, min(v.bot, v.h-1))
		v.row, v.col = 0, 0
	}
	v.clamp()
}

// String returns the screen's text, one line per row.
func (v *vt) String() string {
	var b strings.Builder
	for i, l := range v.cells {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(strings.Join(l, ""), " "))
	}
	return b.String()
}
