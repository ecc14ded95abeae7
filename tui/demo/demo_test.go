package demo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/replay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo shows what the issue promises: a retried idempotent tool, a
// non-idempotent tool that is not retried, a fail-fast failure that
// cancels a sibling, collected outcomes, a faithful replay and a drift.
func TestHeadlessDemoShowsEveryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the live scenarios (about 3 s of scripted delays)")
	}
	var out bytes.Buffer
	if err := RunHeadless(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"=== 1/4", "=== 4/4",
		"fetch_price attempt 3/3", // retried twice, then succeeded
		"reason=not idempotent: charge_card is not in idempotent_tools",
		"reason=sibling_failure cause=/body/2", // reserve_stock cancelled by the failing charge
		"result: ToolExecutionError: card gateway timeout",
		`"error_type":"ToolExecutionError","success":false`, // collect
		"replay.mismatch",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

func TestEmbeddedRecordingReplays(t *testing.T) {
	sc, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	v, rp, err := sc[2].Run(context.Background(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := rp.FirstMismatch(); m != nil {
		t.Fatalf("the recording drifts from its own program: %s", m.SideBySide())
	}
	if err := rp.AssertConsumed(); err != nil {
		t.Fatal(err)
	}
	outcomes, _ := v.([]any)
	if len(outcomes) != 3 {
		t.Fatalf("want 3 outcomes, got %v", v)
	}

	_, rp, err = sc[3].Run(context.Background(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	m := rp.FirstMismatch()
	if m == nil || m.Drift != replay.DriftChanged || !errors.Is(m, engine.ReplayMismatchError) {
		t.Fatalf("the drifted program must drift: %v", m)
	}
}
