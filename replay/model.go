package replay

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/fixtures"
)

// ModelReplayTransport replays recorded model calls in order (reference
// §6.2): each request consumes the next entry, whose kind and request must
// equal the call's (decoded JSON equality).
type ModelReplayTransport struct {
	mu      sync.Mutex
	entries []fixtures.ModelCall
	cursor  int
}

// NewModelReplay returns a transport serving entries in order.
func NewModelReplay(entries []fixtures.ModelCall) *ModelReplayTransport {
	cp := make([]fixtures.ModelCall, len(entries))
	copy(cp, entries)
	return &ModelReplayTransport{entries: cp}
}

func (t *ModelReplayTransport) take(kind string, req map[string]any) (*fixtures.ModelCall, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cursor >= len(t.entries) {
		return nil, &MismatchError{Drift: DriftModel, Message: fmt.Sprintf("Unexpected model %s request after replay end", kind)}
	}
	k := t.cursor + 1
	e := &t.entries[t.cursor]
	t.cursor++
	if e.Kind != kind || !fixtures.Match(map[string]any(e.Request), map[string]any(req)) {
		m := &MismatchError{Drift: DriftModel, Entry: k, Message: fmt.Sprintf("Model replay entry %d did not match %s request", k, kind)}
		if e.Kind != kind {
			m.Diff = append(m.Diff, fixtures.FieldDiff{Path: "kind", Expected: e.Kind, Actual: kind, Kind: "changed"})
		}
		for _, d := range fixtures.Diff(map[string]any(e.Request), map[string]any(req)) {
			d.Path = "request" + prefixPath(d.Path)
			m.Diff = append(m.Diff, d)
		}
		return nil, m
	}
	return e, nil
}

// Complete returns the next recorded completion.
func (t *ModelReplayTransport) Complete(ctx context.Context, req map[string]any) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	e, err := t.take(fixtures.KindComplete, req)
	if err != nil {
		return "", err
	}
	return e.Response, nil
}

// Stream yields the next recorded stream's chunks; errors surface when
// iteration starts, as upstream.
func (t *ModelReplayTransport) Stream(ctx context.Context, req map[string]any) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		e, err := t.take(fixtures.KindStream, req)
		if err != nil {
			yield("", err)
			return
		}
		for _, c := range e.Chunks {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// AssertConsumed fails when model entries remain.
func (t *ModelReplayTransport) AssertConsumed() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.entries) - t.cursor; n > 0 {
		return &MismatchError{Drift: DriftUnconsumed, Message: fmt.Sprintf("Model replay has %d unconsumed entries", n)}
	}
	return nil
}

var _ engine.ModelTransport = (*ModelReplayTransport)(nil)
