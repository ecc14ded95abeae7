package tui

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// savePhase is where the save dialog is.
type savePhase uint8

const (
	phaseList    savePhase = iota // choose which redactions apply
	phaseRule                     // type an extra key rule
	phasePath                     // type the path
	phaseConfirm                  // the file exists: overwrite? y/n
	phaseBusy                     // a preview or save is running
	phaseDone                     // saved
)

// Results of the save dialog's commands, addressed to it by token.
type (
	previewMsg struct {
		token int
		items []RedactionItem
		err   error
	}
	savedMsg struct {
		token     int
		path      string
		overwrite bool
		err       error
	}
)

// saveDialog lists what redaction would change, lets the user toggle each
// item and add key rules, asks for a path and saves, asking before it
// overwrites an existing file.
type saveDialog struct {
	c      *common
	saver  Saver
	width  int
	height int
	closed bool
	token  int // increments on every open, so stale results are ignored

	phase     savePhase
	items     []RedactionItem
	skip      map[int]bool
	extraKeys []string
	sel       int
	rule      textinput.Model
	path      textinput.Model
	status    string
	errText   string
}

func newSaveDialog(c *common) saveDialog {
	mk := func(prompt, placeholder string) textinput.Model {
		in := textinput.New()
		in.Prompt = prompt
		in.Placeholder = placeholder
		in.SetStyles(c.styles.Input)
		return in
	}
	return saveDialog{
		c:      c,
		closed: true,
		rule:   mk("key rule: ", "a JSON key to mask everywhere, e.g. api_key"),
		path:   mk("save to: ", "fixture.json"),
	}
}

// open shows the dialog and asks the saver for a preview.
func (d saveDialog) open(s Saver, defaultPath string) (saveDialog, tea.Cmd) {
	d.saver = s
	d.closed = false
	d.token++
	d.items, d.extraKeys, d.sel = nil, nil, 0
	d.skip = map[int]bool{}
	d.status, d.errText = "", ""
	d.rule.Reset()
	if d.path.Value() == "" {
		d.path.SetValue(defaultPath)
	}
	return d.preview()
}

// preview runs Saver.Preview in a command.
func (d saveDialog) preview() (saveDialog, tea.Cmd) {
	d.phase = phaseBusy
	d.status = "previewing redaction…"
	s, token, keys := d.saver, d.token, slices.Clone(d.extraKeys)
	return d, func() tea.Msg {
		items, err := s.Preview(keys)
		return previewMsg{token: token, items: items, err: err}
	}
}

// save runs Saver.Save in a command.
func (d saveDialog) save(overwrite bool) (saveDialog, tea.Cmd) {
	d.phase = phaseBusy
	d.status = "saving…"
	d.errText = ""
	path := strings.TrimSpace(d.path.Value())
	var skip []int
	for _, it := range d.items {
		if d.skip[it.ID] {
			skip = append(skip, it.ID)
		}
	}
	s, token, keys := d.saver, d.token, slices.Clone(d.extraKeys)
	return d, func() tea.Msg {
		err := s.Save(path, skip, keys, overwrite)
		return savedMsg{token: token, path: path, overwrite: overwrite, err: err}
	}
}

// SetSize sets the space the dialog may use.
func (d saveDialog) SetSize(w, h int) saveDialog {
	d.width, d.height = w, h
	iw := max(10, min(60, w-8))
	d.rule.SetWidth(iw - len(d.rule.Prompt))
	d.path.SetWidth(iw - len(d.path.Prompt))
	return d
}

// Update takes every key while the dialog is open.
func (d saveDialog) Update(msg tea.Msg) (saveDialog, tea.Cmd) {
	km := d.c.keys
	switch msg := msg.(type) {
	case previewMsg:
		if msg.token != d.token {
			return d, nil
		}
		d.status = ""
		if msg.err != nil {
			d.errText = "preview failed: " + msg.err.Error()
		} else {
			d.items = msg.items
			d.errText = ""
		}
		d.phase = phaseList
		d.sel = max(0, min(d.sel, len(d.items)-1))
		return d, nil
	case savedMsg:
		if msg.token != d.token {
			return d, nil
		}
		switch {
		case msg.err == nil:
			d.phase = phaseDone
			d.status = "saved " + msg.path
		case errors.Is(msg.err, os.ErrExist) && !msg.overwrite:
			d.phase = phaseConfirm
			d.status = ""
		default:
			d.phase = phasePath
			d.status = ""
			d.errText = "save failed: " + msg.err.Error()
			return d, d.path.Focus()
		}
		return d, nil
	case tea.KeyPressMsg:
		switch d.phase {
		case phaseBusy:
			if key.Matches(msg, km.Cancel) {
				d.closed = true
			}
			return d, nil
		case phaseDone:
			d.closed = true
			return d, nil
		case phaseConfirm:
			switch {
			case key.Matches(msg, km.Yes):
				return d.save(true)
			case key.Matches(msg, km.No), key.Matches(msg, km.Cancel):
				d.phase = phasePath
				return d, d.path.Focus()
			}
			return d, nil
		case phaseRule:
			switch {
			case key.Matches(msg, km.Submit):
				d.rule.Blur()
				if r := strings.TrimSpace(d.rule.Value()); r != "" && !slices.Contains(d.extraKeys, r) {
					d.extraKeys = append(d.extraKeys, r)
					d.rule.Reset()
					return d.preview()
				}
				d.phase = phaseList
				return d, nil
			case key.Matches(msg, km.Dismiss):
				d.rule.Blur()
				d.phase = phaseList
				return d, nil
			}
			var cmd tea.Cmd
			d.rule, cmd = d.rule.Update(msg)
			return d, cmd
		case phasePath:
			switch {
			case key.Matches(msg, km.Submit):
				d.path.Blur()
				if strings.TrimSpace(d.path.Value()) == "" {
					d.errText = "type a path"
					return d, d.path.Focus()
				}
				return d.save(false)
			case key.Matches(msg, km.Dismiss):
				d.path.Blur()
				d.phase = phaseList
				return d, nil
			}
			var cmd tea.Cmd
			d.path, cmd = d.path.Update(msg)
			return d, cmd
		}
		// phaseList
		switch {
		case key.Matches(msg, km.Cancel), key.Matches(msg, km.Quit):
			d.closed = true
		case key.Matches(msg, km.Up):
			d.sel = max(0, d.sel-1)
		case key.Matches(msg, km.Down):
			d.sel = max(0, min(len(d.items)-1, d.sel+1))
		case key.Matches(msg, km.Toggle):
			if d.sel < len(d.items) {
				id := d.items[d.sel].ID
				d.skip[id] = !d.skip[id]
			}
		case key.Matches(msg, km.AddRule):
			d.phase = phaseRule
			return d, d.rule.Focus()
		case key.Matches(msg, km.Confirm):
			d.phase = phasePath
			d.path.CursorEnd()
			return d, d.path.Focus()
		}
	}
	return d, nil
}

// View renders the dialog box.
func (d saveDialog) View() string {
	st := d.c.styles
	w := max(30, min(90, d.width-4))
	lines := []string{st.DialogTitle.Render("Save fixture"), ""}
	applied := 0
	for _, it := range d.items {
		if !d.skip[it.ID] {
			applied++
		}
	}
	if d.phase != phaseBusy || d.items != nil {
		lines = append(lines, fmt.Sprintf("Redaction would change %d value(s); %d selected.", len(d.items), applied))
	}
	if len(d.extraKeys) > 0 {
		lines = append(lines, st.Muted.Render("extra key rules: "+strings.Join(d.extraKeys, ", ")))
	}
	maxItems := max(3, d.height-14)
	start := max(0, min(d.sel-maxItems/2, len(d.items)-maxItems))
	for i := start; i < len(d.items) && i < start+maxItems; i++ {
		it := d.items[i]
		box := "[x]"
		if d.skip[it.ID] {
			box = "[ ]"
		}
		text := fmt.Sprintf("%s %-10s %s  %s", box, it.Detector, it.Path, it.Preview)
		line := fitLine("  "+text, w)
		if i == d.sel && d.phase == phaseList {
			line = st.Selected.Render(fitLine("› "+text, w))
		}
		lines = append(lines, line)
	}
	lines = append(lines, "")
	switch d.phase {
	case phaseRule:
		lines = append(lines, d.rule.View())
	case phaseConfirm:
		lines = append(lines, st.Warn.Render(strings.TrimSpace(d.path.Value())+" exists. overwrite? y/n"))
	default:
		lines = append(lines, d.path.View())
	}
	if d.status != "" {
		lines = append(lines, st.Accent.Render(d.status))
	}
	if d.errText != "" {
		lines = append(lines, st.Error.Render(d.errText))
	}
	for i, l := range lines {
		lines[i] = fitLine(l, w)
	}
	return st.Dialog.Render(strings.Join(lines, "\n"))
}

// ShortHelp lists the bindings that act in the current phase.
func (d saveDialog) ShortHelp() []key.Binding {
	k := d.c.keys
	switch d.phase {
	case phaseConfirm:
		return []key.Binding{k.Yes, k.No}
	case phaseRule, phasePath:
		return []key.Binding{k.Submit, k.Dismiss}
	case phaseDone:
		return []key.Binding{key.NewBinding(key.WithKeys("any"), key.WithHelp("any key", "close"))}
	case phaseBusy:
		return []key.Binding{k.Cancel}
	}
	return []key.Binding{k.Up, k.Down, k.Toggle, k.AddRule,
		key.NewBinding(key.WithKeys(k.Confirm.Keys()...), key.WithHelp(k.Confirm.Help().Key, "choose path")), k.Cancel}
}

// FullHelp lists the same bindings.
func (d saveDialog) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }
