package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap holds every key binding of the debugger. Build it with
// DefaultKeyMap and change it with LoadKeyMap; bindings that do not apply to
// the current run or dialog are disabled, so the help shows only what works.
type KeyMap struct {
	// Stepping and running.
	Step        key.Binding
	Back        key.Binding
	Continue    key.Binding
	Pause       key.Binding
	NextFailure key.Binding
	NextRetry   key.Binding
	NextCancel  key.Binding
	Restart     key.Binding

	// Breakpoints.
	Break       key.Binding
	Breakpoints key.Binding

	// Timeline search and filter.
	Search      key.Binding
	NextMatch   key.Binding
	PrevMatch   key.Binding
	ClearFilter key.Binding

	// Navigation inside the focused pane.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Select   key.Binding

	// Panes and runs.
	NextPane key.Binding
	PrevPane key.Binding
	PrevRun  key.Binding
	NextRun  key.Binding

	// Replay and fixtures.
	Accept key.Binding
	Save   key.Binding

	// Text inputs (search, key rule, path).
	Submit  key.Binding
	Dismiss key.Binding

	// Dialogs (they take input first).
	Toggle  key.Binding
	Delete  key.Binding
	AddRule key.Binding
	Confirm key.Binding
	Cancel  key.Binding
	Yes     key.Binding
	No      key.Binding

	Help key.Binding
	Quit key.Binding
}

// DefaultKeyMap returns the default bindings, close to Delve's where they
// overlap: n or right steps, p or left steps back, c continues, space
// pauses, b sets a breakpoint, f runs to the next failure, / searches, tab
// switches panes, ? shows every binding and q quits.
func DefaultKeyMap() KeyMap {
	b := func(desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKeys(keys), desc))
	}
	return KeyMap{
		Step:        b("step", "n", "right"),
		Back:        b("back", "p", "left"),
		Continue:    b("continue", "c"),
		Pause:       b("pause", "space"),
		NextFailure: b("next failure", "f"),
		NextRetry:   b("next retry", "t"),
		NextCancel:  b("next cancel", "x"),
		Restart:     b("restart", "r"),

		Break:       b("break", "b"),
		Breakpoints: b("breakpoints", "B"),

		Search:      b("search/filter", "/"),
		NextMatch:   b("next match", ">"),
		PrevMatch:   b("prev match", "<"),
		ClearFilter: b("clear filter", "esc"),

		Up:       b("up", "up", "k"),
		Down:     b("down", "down", "j"),
		PageUp:   b("page up", "pgup", "ctrl+u"),
		PageDown: b("page down", "pgdown", "ctrl+d"),
		Top:      b("first", "home", "g"),
		Bottom:   b("last", "end", "G"),
		Select:   b("go to node", "enter"),

		NextPane: b("next pane", "tab"),
		PrevPane: b("prev pane", "shift+tab"),
		PrevRun:  b("prev run", "["),
		NextRun:  b("next run", "]"),

		Accept: b("accept mismatch", "a"),
		Save:   b("save fixture", "s"),

		Submit:  b("ok", "enter"),
		Dismiss: b("back", "esc"),

		Toggle:  b("toggle", "space"),
		Delete:  b("delete", "d", "delete"),
		AddRule: b("add key rule", "a"),
		Confirm: b("confirm", "enter"),
		Cancel:  b("close", "esc"),
		Yes:     b("yes", "y"),
		No:      b("no", "n"),

		Help: b("help", "?"),
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// actions names every binding as the key map file spells it.
func (k *KeyMap) actions() []struct {
	name string
	b    *key.Binding
} {
	type action = struct {
		name string
		b    *key.Binding
	}
	return []action{
		{"step", &k.Step}, {"back", &k.Back}, {"continue", &k.Continue}, {"pause", &k.Pause},
		{"next_failure", &k.NextFailure}, {"next_retry", &k.NextRetry}, {"next_cancel", &k.NextCancel},
		{"restart", &k.Restart}, {"break", &k.Break}, {"breakpoints", &k.Breakpoints},
		{"search", &k.Search}, {"next_match", &k.NextMatch}, {"prev_match", &k.PrevMatch},
		{"clear_filter", &k.ClearFilter}, {"up", &k.Up}, {"down", &k.Down}, {"page_up", &k.PageUp},
		{"page_down", &k.PageDown}, {"top", &k.Top}, {"bottom", &k.Bottom}, {"select", &k.Select},
		{"next_pane", &k.NextPane}, {"prev_pane", &k.PrevPane}, {"prev_run", &k.PrevRun},
		{"next_run", &k.NextRun}, {"accept", &k.Accept}, {"save", &k.Save}, {"toggle", &k.Toggle},
		{"submit", &k.Submit}, {"dismiss", &k.Dismiss}, {"delete", &k.Delete}, {"add_rule", &k.AddRule}, {"confirm", &k.Confirm}, {"cancel", &k.Cancel},
		{"yes", &k.Yes}, {"no", &k.No}, {"help", &k.Help}, {"quit", &k.Quit},
	}
}

// ActionNames lists the action names a key map file may use, sorted.
func ActionNames() []string {
	k := DefaultKeyMap()
	var names []string
	for _, a := range k.actions() {
		names = append(names, a.name)
	}
	slices.Sort(names)
	return names
}

// KeyMapError reports a key map file that cannot be used.
type KeyMapError struct {
	File   string // the file named by Options.KeyMapFile
	Action string // the offending action, empty when the file itself is bad
	Reason string
	Err    error // the underlying read or decode error, if any
}

// Error names the file, the action and what is wrong.
func (e *KeyMapError) Error() string {
	var b strings.Builder
	b.WriteString("key map ")
	b.WriteString(e.File)
	if e.Action != "" {
		fmt.Fprintf(&b, ": action %q", e.Action)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the read or decode error, if any.
func (e *KeyMapError) Unwrap() error { return e.Err }

// LoadKeyMap returns DefaultKeyMap with the bindings named in the JSON file
// at path replaced, for example {"step": ["n", "right"], "quit": ["Q"]}.
// An unknown action name or an empty key list is a *KeyMapError naming the
// file and the action.
func LoadKeyMap(path string) (KeyMap, error) {
	km := DefaultKeyMap()
	data, err := os.ReadFile(path)
	if err != nil {
		return km, &KeyMapError{File: path, Reason: "cannot read", Err: err}
	}
	return km, km.apply(path, data)
}

func (k *KeyMap) apply(path string, data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return &KeyMapError{File: path, Reason: "invalid JSON (want an object of action: [keys])", Err: err}
	}
	byName := map[string]*key.Binding{}
	for _, a := range k.actions() {
		byName[a.name] = a.b
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names) // report the first problem deterministically
	for _, name := range names {
		b, ok := byName[name]
		if !ok {
			return &KeyMapError{File: path, Action: name, Reason: "unknown action (known: " + strings.Join(ActionNames(), ", ") + ")"}
		}
		var keys []string
		if err := json.Unmarshal(raw[name], &keys); err != nil {
			return &KeyMapError{File: path, Action: name, Reason: "want a list of key names such as [\"n\", \"right\"]"}
		}
		if len(keys) == 0 {
			return &KeyMapError{File: path, Action: name, Reason: "empty key list"}
		}
		for _, s := range keys {
			if strings.TrimSpace(s) == "" {
				return &KeyMapError{File: path, Action: name, Reason: "empty key name"}
			}
		}
		desc := b.Help().Desc
		b.SetKeys(keys...)
		b.SetHelp(helpKeys(keys), desc)
	}
	return nil
}

// helpKeys renders key names for the help line.
func helpKeys(keys []string) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		switch k {
		case "right":
			k = "→"
		case "left":
			k = "←"
		case "up":
			k = "↑"
		case "down":
			k = "↓"
		}
		out[i] = k
	}
	return strings.Join(out, "/")
}
