package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/tracer"
)

// Benchmarks of the evaluator against the builtin tools. Each reports
// ns/call, the time per physical tool call (so engine overhead per step
// compares across program shapes), with allocations.
//
//	go test -run '^$' -bench . -benchmem ./engine/

// mapProgram is a v1 map calling identity over range(n): n+1 tool calls.
func mapProgram(n int) string {
	return fmt.Sprintf(`{"type":"program","mode":"single","body":[{"type":"map",
	  "function":{"type":"lambda","params":["x"],"body":{"type":"function","name":"identity","params":[{"type":"value","name":"x","value":null}]}},
	  "iterable":{"type":"function","name":"range","params":[{"type":"value","name":"n","value":%d}]}}]}`, n)
}

// parallelProgram is a v1 parallel program of n branches identity(i).
func parallelProgram(n int) string {
	body := make([]string, n)
	for i := range body {
		body[i] = fmt.Sprintf(`{"type":"function","name":"identity","params":[{"type":"value","name":"v","value":%d}]}`, i)
	}
	return `{"type":"program","mode":"parallel","body":[` + strings.Join(body, ",") + `]}`
}

// countdownProgram is v2 countdown(n): n+1 user calls, 2n+1 tool calls.
func countdownProgram(n int) string {
	return fmt.Sprintf(`{"schema_version":"2.0","definitions":[{"name":"countdown","params":["n"],"body":
	  {"type":"conditional","condition":{"type":"tool_call","tool":"less_than","arguments":{"a":{"type":"variable","name":"n"},"b":{"type":"literal","value":1}}},
	   "true_branch":{"type":"literal","value":0},
	   "false_branch":{"type":"call","function":"countdown","arguments":[{"type":"tool_call","tool":"subtract","arguments":{"a":{"type":"variable","name":"n"},"b":{"type":"literal","value":1}}}]}}}],
	  "body":[{"type":"call","function":"countdown","arguments":[{"type":"literal","value":%d}]}]}`, n)
}

func benchEval(b *testing.B, src string, calls int, opts func() engine.Options) {
	prog, err := engine.ParseProgram([]byte(src))
	if err != nil {
		b.Fatal(err)
	}
	tb := tools.Builtins()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := engine.Eval(ctx, prog, tb, opts()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(calls), "ns/call")
}

func noOptions() engine.Options { return engine.Options{} }

func BenchmarkEvalMap100k(b *testing.B) {
	benchEval(b, mapProgram(100000), 100001, noOptions)
}

func BenchmarkEvalParallel1000(b *testing.B) {
	benchEval(b, parallelProgram(1000), 1000, noOptions)
}

func BenchmarkEvalParallel1000MaxConcurrency4(b *testing.B) {
	benchEval(b, parallelProgram(1000), 1000, func() engine.Options {
		return engine.Options{Limits: engine.Limits{MaxConcurrency: 4}}
	})
}

func BenchmarkEvalV2Countdown1000(b *testing.B) {
	benchEval(b, countdownProgram(1000), 2001, noOptions)
}

// The map traced into a memory sink: every node and attempt is an event.
func BenchmarkEvalMap100kTraced(b *testing.B) {
	benchEval(b, mapProgram(100000), 100001, func() engine.Options {
		return engine.Options{Tracer: tracer.New(tracer.NewMemory())}
	})
}

// The map under a retry policy that never retries: the policy's overhead.
func BenchmarkEvalMap100kRetryPolicy(b *testing.B) {
	benchEval(b, mapProgram(100000), 100001, func() engine.Options {
		return engine.Options{Policy: engine.Policy{Retry: engine.RetryPolicy{MaxAttempts: 3, IdempotentTools: []string{"identity", "range"}}}}
	})
}

// The map with every limit set (none reached): the budgets' overhead.
func BenchmarkEvalMap100kLimits(b *testing.B) {
	benchEval(b, mapProgram(100000), 100001, func() engine.Options {
		return engine.Options{Limits: engine.Limits{MaxNodes: 1 << 40, MaxDepth: 100, MaxToolCalls: 1 << 40, TimeoutText: "3600", Timeout: 3600e9}}
	})
}

// Parsing alone: a 1,000-branch program (about 90 KB).
func BenchmarkParseParallel1000(b *testing.B) {
	src := []byte(parallelProgram(1000))
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := engine.ParseProgram(src); err != nil {
			b.Fatal(err)
		}
	}
}
