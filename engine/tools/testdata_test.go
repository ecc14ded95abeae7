package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
)

func loadTestdata(t testing.TB, name string) *Toolbox {
	t.Helper()
	tb, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestArithToolbox(t *testing.T) {
	tb := loadTestdata(t, "arith.json")
	n := func(s string) json.Number { return json.Number(s) }
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"add", map[string]any{"a": n(two70), "b": n("1")}, two70plus1},
		{"add", map[string]any{"a": n("0.1"), "b": n("0.2")}, `0.30000000000000004`},
		{"subtract", map[string]any{"total": n("10"), "amount": n("4")}, `6`},
		{"multiply", map[string]any{"a": n("6"), "b": n("7")}, `42`},
		{"divide", map[string]any{"numerator": n("6"), "denominator": n("3")}, `2.0`},
		{"less_than_or_equal", map[string]any{"a": n("0"), "b": n("0.0")}, `true`},
		{"less_than_or_equal", map[string]any{"a": n("1"), "b": n("0")}, `false`},
		{"is_even", map[string]any{"value": n("4")}, `true`},
		{"range", map[string]any{"start": n("2"), "stop": n("5")}, `[2,3,4]`},
		{"range", map[string]any{"start": n("0"), "stop": n("10"), "step": n("4")}, `[0,4,8]`},
		{"sum", map[string]any{"values": []any{n("1"), n("2"), n("3.5")}}, `6.5`},
		{"identity", map[string]any{"value": "x"}, `"x"`},
		{"constant", map[string]any{}, `42`},
	} {
		out, err := tb.CallTool(context.Background(), &engine.Call{Tool: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Errorf("%s%v: %v", tc.tool, tc.args, err)
			continue
		}
		if text, _ := engine.EncodeValue(out); string(text) != tc.want {
			t.Errorf("%s%v = %s, want %s", tc.tool, tc.args, text, tc.want)
		}
	}
	_, err := tb.CallTool(context.Background(), &engine.Call{Tool: "divide", Arguments: map[string]any{"numerator": n("1"), "denominator": n("0")}})
	if !errors.Is(err, engine.ToolExecutionError) || err.Error() != "division by zero" {
		t.Errorf("divide by zero: %v", err)
	}
	_, err = tb.CallTool(context.Background(), &engine.Call{Tool: "less_than_or_equal", Arguments: map[string]any{"a": n("5"), "b": n("0")}})
	if !errors.Is(err, engine.ToolExecutionError) {
		t.Errorf("no table row: %v", err)
	}
	d, _ := tb.Tool(context.Background(), "subtract")
	if got := d.PropertyNames(); !slices.Equal(got, []string{"total", "amount"}) {
		t.Errorf("subtract properties %v", got)
	}
	d, _ = tb.Tool(context.Background(), "range")
	if got := d.PropertyNames(); !slices.Equal(got, []string{"start", "stop", "step"}) || d.Legacy() {
		t.Errorf("range properties %v (legacy %v)", got, d.Legacy())
	}
}

func TestFlakyToolbox(t *testing.T) {
	ctx := context.Background()
	tb := loadTestdata(t, "flaky.json")
	clock := &recordingClock{}
	tb.SetClock(clock)
	quote := map[string]any{"symbol": "ACME"}

	// The idempotent tool fails twice (both retryable by default), then
	// answers; other arguments start their own sequence.
	_, err := call(tb, ctx, "fetch_quote", quote)
	if !errors.Is(err, engine.ToolExecutionError) || err.Error() != "quote service unavailable" {
		t.Errorf("attempt 1: %v", err)
	}
	_, err = call(tb, ctx, "fetch_quote", quote)
	if !errors.Is(err, engine.TimeoutError) || err.Error() != "quote service timed out" {
		t.Errorf("attempt 2: %v", err)
	}
	for range 2 {
		out, err := call(tb, ctx, "fetch_quote", quote)
		if text, _ := engine.EncodeValue(out); err != nil || string(text) != `{"currency":"USD","price":101.25}` {
			t.Errorf("attempt 3+: %s, %v", text, err)
		}
	}
	if _, err := call(tb, ctx, "fetch_quote", map[string]any{"symbol": "OTHER"}); err == nil {
		t.Error("other arguments did not start their own script")
	}
	if tb.Calls("fetch_quote") != 5 {
		t.Errorf("Calls = %d", tb.Calls("fetch_quote"))
	}
	d, _ := tb.Tool(ctx, "fetch_quote")
	if d.Effects == nil || d.Effects.Idempotent == nil || !*d.Effects.Idempotent {
		t.Error("fetch_quote is not marked idempotent")
	}

	// The non-idempotent tool fails on its first attempt.
	charge := map[string]any{"amount": json.Number("9.99")}
	if _, err := call(tb, ctx, "charge_card", charge); !errors.Is(err, engine.ToolExecutionError) {
		t.Errorf("charge_card attempt 1: %v", err)
	}
	if out, err := call(tb, ctx, "charge_card", charge); err != nil || !engine.Equal(out, map[string]any{"charged": true}) {
		t.Errorf("charge_card attempt 2: %v, %v", out, err)
	}

	// The slow tool sleeps 50 ms on the clock, then echoes.
	if out, err := call(tb, ctx, "slow_echo", map[string]any{"text": "hi"}); out != "hi" || err != nil {
		t.Errorf("slow_echo: %v, %v", out, err)
	}
	want := []time.Duration{5 * time.Millisecond, 50 * time.Millisecond}
	if got := clock.recorded(); !slices.Equal(got, want) {
		t.Errorf("sleeps %v, want %v", got, want)
	}
}

// The slow tool on the wall clock is cancelled promptly.
func TestFlakyToolboxSlowCancelled(t *testing.T) {
	tb := loadTestdata(t, "flaky.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := call(tb, ctx, "slow_echo", map[string]any{"text": "hi"}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
