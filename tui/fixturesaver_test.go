package tui

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/treelang/treelang/fixtures"
)

func TestFixtureSaverRedactsAndNeverOverwritesSilently(t *testing.T) {
	f := fixtures.New()
	f.Calls = []fixtures.Call{fixtures.OutputCall("login", map[string]any{"token": "abc123secret", "user": "ann"}, "ok")}
	s := FixtureSaver(func() *fixtures.Fixture { return f }, fixtures.DefaultRules())
	items, err := s.Preview([]string{"user"})
	if err != nil || len(items) != 2 {
		t.Fatalf("preview %v %v", items, err)
	}
	path := filepath.Join(t.TempDir(), "fx.json")
	if err := s.Save(path, nil, []string{"user"}, false); err != nil {
		t.Fatal(err)
	}
	got, err := fixtures.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Calls[0].Arguments["token"] == "abc123secret" || got.Calls[0].Arguments["user"] == "ann" {
		t.Fatalf("not redacted: %v", got.Calls[0].Arguments)
	}
	if err := s.Save(path, nil, nil, false); !errors.Is(err, os.ErrExist) {
		t.Fatalf("saving over an existing file without confirmation: %v", err)
	}
	if err := s.Save(path, []int{0, 1}, []string{"user"}, true); err != nil {
		t.Fatal(err)
	}
	got, _ = fixtures.Load(path)
	if got.Calls[0].Arguments["user"] != "ann" {
		t.Fatalf("toggled-off detection was redacted: %v", got.Calls[0].Arguments)
	}
}

func TestFixtureSaverBeforeAnyRun(t *testing.T) {
	s := FixtureSaver(func() *fixtures.Fixture { return nil }, fixtures.DefaultRules())
	if _, err := s.Preview(nil); err == nil {
		t.Fatal("want an error before anything was recorded")
	}
}
