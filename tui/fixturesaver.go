package tui

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/treelang/treelang/fixtures"
)

// FixtureSaver is the Saver of a run that records a fixture: last returns
// what the latest run recorded (nil before any), rules are the redaction
// rules in force, to which the dialog's extra keys are added.
func FixtureSaver(last func() *fixtures.Fixture, rules fixtures.Rules) Saver {
	return fixtureSaver{last: last, rules: rules}
}

type fixtureSaver struct {
	last  func() *fixtures.Fixture
	rules fixtures.Rules
}

func (s fixtureSaver) with(extraKeys []string) fixtures.Rules {
	r := s.rules
	r.Keys = append(slices.Clone(r.Keys), extraKeys...)
	return r
}

func (s fixtureSaver) fixture() (*fixtures.Fixture, error) {
	f := s.last()
	if f == nil {
		return nil, errors.New("nothing was recorded yet")
	}
	return f, nil
}

// Preview lists every detection, numbered as Save's skip expects.
func (s fixtureSaver) Preview(extraKeys []string) ([]RedactionItem, error) {
	f, err := s.fixture()
	if err != nil {
		return nil, err
	}
	_, rep := fixtures.Redact(f, s.with(extraKeys))
	if rep.Err != nil {
		return nil, rep.Err
	}
	items := make([]RedactionItem, len(rep.Changes))
	for i, c := range rep.Changes {
		items[i] = RedactionItem{ID: i, Path: c.Path, Detector: c.Detector, Preview: c.Preview}
	}
	return items, nil
}

// Save redacts all but the skipped detections and writes the fixture
// atomically; an existing file is replaced only with overwrite.
func (s fixtureSaver) Save(path string, skip []int, extraKeys []string, overwrite bool) error {
	f, err := s.fixture()
	if err != nil {
		return err
	}
	if !overwrite {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s: %w", path, os.ErrExist)
		}
	}
	set := make(map[int]bool, len(skip))
	for _, id := range skip {
		set[id] = true
	}
	red, _ := fixtures.RedactSkipping(f, s.with(extraKeys), set)
	return fixtures.Save(path, red)
}
