package replay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/fixtures"
	"github.com/treelang/treelang/replay"
)

func mapProgram(b *testing.B, n int) *engine.Program {
	b.Helper()
	src := fmt.Sprintf(`{"type":"program","mode":"single","body":[{"type":"map",
	 "function":{"type":"lambda","params":["x"],"body":{"type":"function","name":"identity","params":[{"type":"value","name":"x","value":null}]}},
	 "iterable":{"type":"function","name":"range","params":[{"type":"value","name":"stop","value":%d}]}}]}`, n)
	p, err := engine.ParseProgram([]byte(src))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkReplayMap replays a recorded map of n identity calls (n+1
// fixture entries) and compares it with the same run live: the cost per
// call must not grow with the fixture's size.
func BenchmarkReplayMap(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		prog := mapProgram(b, n)
		b.Run(fmt.Sprintf("live/n=%d", n), func(b *testing.B) {
			tb := tools.Builtins()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := engine.Eval(context.Background(), prog, tb, engine.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+1)), "ns/call")
		})
		rec := replay.NewRecorder(tools.Builtins())
		if _, err := engine.Eval(context.Background(), prog, rec, engine.Options{Clock: rec.Clock(nil)}); err != nil {
			b.Fatal(err)
		}
		fx := rec.Fixture(nil)
		b.Run(fmt.Sprintf("replay/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rp, err := replay.NewToolReplay(fixtures.New(), replay.Options{})
				_ = rp
				rp, err = replay.NewToolReplay(fx, replay.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := engine.Eval(context.Background(), prog, rp, engine.Options{Clock: rp.Clock()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+1)), "ns/call")
		})
	}
}
