package tui

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"testing"
)

// TestKeyMapExampleFile keeps testdata/keymap.json, the documented example
// listing every action with its default keys, loadable and complete.
func TestKeyMapExampleFile(t *testing.T) {
	const path = "testdata/keymap.json"
	km := DefaultKeyMap()
	want := map[string][]string{}
	for _, a := range km.actions() {
		want[a.name] = a.b.Keys()
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" { // golden's -update
		data, _ := json.MarshalIndent(want, "", "  ")
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadKeyMap(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range got.actions() {
		if !slices.Equal(a.b.Keys(), want[a.name]) {
			t.Errorf("%s: %v, defaults are %v (regenerate with -update)", a.name, a.b.Keys(), want[a.name])
		}
	}
	data, _ := os.ReadFile(path)
	var raw map[string][]string
	if err := json.Unmarshal(data, &raw); err != nil || len(raw) != len(ActionNames()) {
		t.Fatalf("the example should list all %d actions, has %d (%v)", len(ActionNames()), len(raw), err)
	}
}
