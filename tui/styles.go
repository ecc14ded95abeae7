package tui

import (
	"encoding/json"
	"fmt"
	"image/color"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// Styles are every style the debugger draws with, built from a few semantic
// colors by NewStyles. Selection and focus are also shown by attributes
// (reverse, bold) and markers, so the screen stays readable without color.
type Styles struct {
	IsDark bool

	Text      lipgloss.Style
	Muted     lipgloss.Style
	Bold      lipgloss.Style
	Accent    lipgloss.Style
	Error     lipgloss.Style
	Warn      lipgloss.Style
	Good      lipgloss.Style
	Separator lipgloss.Style

	PaneTitle        lipgloss.Style
	PaneTitleFocused lipgloss.Style
	Selected         lipgloss.Style // the selected row of the focused pane
	SelectedBlurred  lipgloss.Style // the selected row of another pane
	Match            lipgloss.Style // search matches

	// Node statuses, indexed by nodeStatus.
	Status [statusCount]lipgloss.Style

	StatusBar   lipgloss.Style
	StatusMode  lipgloss.Style
	StatusState lipgloss.Style

	Dialog      lipgloss.Style
	DialogTitle lipgloss.Style

	DiffExpected lipgloss.Style // fields that differ, expected side
	DiffActual   lipgloss.Style // fields that differ, actual side

	Help  help.Styles
	Input textinput.Styles

	// JSON highlighting: the chroma style built from the same palette and
	// the lipgloss style for each token type it colors.
	Chroma *chroma.Style
	tokens map[chroma.TokenType]lipgloss.Style
}

// palette is the few semantic colors every style derives from.
type palette struct {
	fg, muted, subtle, accent, good, bad, warn, info, cancel color.Color
	key, str, num, lit                                       color.Color
}

func newPalette(isDark bool) palette {
	ld := lipgloss.LightDark(isDark)
	c := lipgloss.Color
	return palette{
		fg:     ld(c("#1f2328"), c("#e6edf3")),
		muted:  ld(c("#6e7781"), c("#8b949e")),
		subtle: ld(c("#d0d7de"), c("#30363d")),
		accent: ld(c("#8250df"), c("#bc8cff")),
		good:   ld(c("#1a7f37"), c("#3fb950")),
		bad:    ld(c("#cf222e"), c("#f85149")),
		warn:   ld(c("#9a6700"), c("#d29922")),
		info:   ld(c("#0969da"), c("#58a6ff")),
		cancel: ld(c("#8c959f"), c("#6e7681")),
		key:    ld(c("#0550ae"), c("#79c0ff")),
		str:    ld(c("#0a3069"), c("#a5d6ff")),
		num:    ld(c("#953800"), c("#ffa657")),
		lit:    ld(c("#8250df"), c("#d2a8ff")),
	}
}

// NewStyles builds the styles for a dark (isDark) or light terminal
// background.
func NewStyles(isDark bool) Styles {
	p := newPalette(isDark)
	ns := lipgloss.NewStyle
	s := Styles{IsDark: isDark}
	s.Text = ns().Foreground(p.fg)
	s.Muted = ns().Foreground(p.muted)
	s.Bold = ns().Bold(true)
	s.Accent = ns().Foreground(p.accent).Bold(true)
	s.Error = ns().Foreground(p.bad)
	s.Warn = ns().Foreground(p.warn)
	s.Good = ns().Foreground(p.good)
	s.Separator = ns().Foreground(p.subtle)

	s.PaneTitle = ns().Foreground(p.muted).Bold(true)
	s.PaneTitleFocused = ns().Foreground(p.accent).Bold(true).Underline(true)
	s.Selected = ns().Reverse(true).Bold(true)
	s.SelectedBlurred = ns().Reverse(true)
	s.Match = ns().Foreground(p.accent).Underline(true)

	s.Status[statusPending] = ns().Foreground(p.muted)
	s.Status[statusRunning] = ns().Foreground(p.info).Bold(true)
	s.Status[statusOK] = ns().Foreground(p.good)
	s.Status[statusFailed] = ns().Foreground(p.bad).Bold(true)
	s.Status[statusRetrying] = ns().Foreground(p.warn).Bold(true)
	s.Status[statusCancelled] = ns().Foreground(p.cancel).Strikethrough(true)

	s.StatusBar = ns().Foreground(p.fg)
	s.StatusMode = ns().Foreground(p.accent).Bold(true).Reverse(true)
	s.StatusState = ns().Bold(true)

	s.Dialog = ns().Border(lipgloss.RoundedBorder()).BorderForeground(p.accent).Padding(0, 1)
	s.DialogTitle = ns().Foreground(p.accent).Bold(true)

	s.DiffExpected = ns().Foreground(p.bad).Bold(true)
	s.DiffActual = ns().Foreground(p.good).Bold(true)

	s.Help = help.DefaultStyles(isDark)
	s.Help.ShortKey = ns().Foreground(p.accent)
	s.Help.FullKey = ns().Foreground(p.accent)

	s.Input = textinput.DefaultStyles(isDark)
	s.Input.Cursor.Blink = false // a steady cursor: no timer, stable frames
	s.Input.Focused.Prompt = ns().Foreground(p.accent)

	s.Chroma = chroma.MustNewStyle("treelang", chroma.StyleEntries{
		chroma.Text:            hex(p.fg),
		chroma.NameTag:         hex(p.key),
		chroma.LiteralString:   hex(p.str),
		chroma.LiteralNumber:   hex(p.num),
		chroma.KeywordConstant: hex(p.lit) + " bold",
		chroma.Punctuation:     hex(p.muted),
		chroma.Error:           hex(p.bad),
	})
	s.tokens = map[chroma.TokenType]lipgloss.Style{}
	for _, tt := range []chroma.TokenType{
		chroma.Text, chroma.NameTag, chroma.LiteralString, chroma.LiteralStringDouble,
		chroma.LiteralNumber, chroma.LiteralNumberInteger, chroma.LiteralNumberFloat,
		chroma.KeywordConstant, chroma.Punctuation, chroma.Error, chroma.Whitespace,
	} {
		s.tokens[tt] = tokenStyle(s.Chroma.Get(tt))
	}
	return s
}

func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	const digits = "0123456789abcdef"
	out := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range []uint32{r >> 8, g >> 8, b >> 8} {
		out[1+2*i] = digits[v>>4]
		out[2+2*i] = digits[v&15]
	}
	return string(out)
}

func tokenStyle(e chroma.StyleEntry) lipgloss.Style {
	st := lipgloss.NewStyle()
	if e.Colour.IsSet() {
		st = st.Foreground(lipgloss.Color(e.Colour.String()))
	}
	if e.Bold == chroma.Yes {
		st = st.Bold(true)
	}
	return st
}

// highlighter renders values as indented, highlighted JSON. The lexer is
// looked up once, when the model is built.
type highlighter struct {
	lexer chroma.Lexer
}

func newHighlighter() highlighter {
	l := lexers.Get("json")
	if l == nil {
		l = lexers.Fallback
	}
	return highlighter{lexer: chroma.Coalesce(l)}
}

// jsonText renders v as indented JSON, keeping json.Number exact.
func jsonText(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// maxJSONLines bounds how much of one value the detail pane highlights.
const maxJSONLines = 400

// lines renders v as highlighted JSON lines, at most maxJSONLines of them.
func (h highlighter) lines(st *Styles, v any) []string {
	text := jsonText(v)
	extra := 0
	if n := strings.Count(text, "\n") + 1; n > maxJSONLines {
		cut := 0
		for range maxJSONLines {
			cut += strings.IndexByte(text[cut:], '\n') + 1
		}
		text = text[:cut-1]
		extra = n - maxJSONLines
	}
	out := h.highlight(st, text)
	if extra > 0 {
		out = append(out, st.Muted.Render(fmt.Sprintf("… %d more lines", extra)))
	}
	return out
}

// highlight colors JSON text and returns it split into lines.
func (h highlighter) highlight(st *Styles, text string) []string {
	it, err := h.lexer.Tokenise(nil, text)
	if err != nil {
		return strings.Split(text, "\n")
	}
	var out []string
	var line strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		style, ok := st.tokens[tok.Type]
		if !ok {
			style, ok = st.tokens[tok.Type.SubCategory()]
			if !ok {
				style = st.tokens[tok.Type.Category()]
			}
		}
		parts := strings.Split(tok.Value, "\n")
		for i, part := range parts {
			if i > 0 {
				out = append(out, line.String())
				line.Reset()
			}
			if part != "" {
				line.WriteString(style.Render(part))
			}
		}
	}
	if line.Len() > 0 {
		out = append(out, line.String())
	}
	return out
}
