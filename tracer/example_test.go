package tracer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/treelang/treelang/tracer"
)

func Example() {
	var file strings.Builder
	mem := tracer.NewMemory()
	tr := tracer.New(tracer.NewJSONLWriter(&file), mem)
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tick := 0
	tr.SetClock(func() time.Time { tick++; return start.Add(time.Duration(tick) * time.Millisecond) })

	ctx := context.Background()
	tr.Emit(ctx, &tracer.Event{Kind: tracer.RunStart, Branch: -1})
	tr.Emit(ctx, &tracer.Event{Kind: tracer.ToolAttemptStart, Site: tracer.Site{Path: "/body/0", Attempt: 1},
		Tool: "add", Branch: 0, Arguments: map[string]any{"a": json.Number("1"), "b": json.Number("0.5")}})
	tr.Emit(ctx, &tracer.Event{Kind: tracer.RunEnd, Branch: -1, Output: json.Number("1.5"), HasOutput: true,
		Duration: 2 * time.Millisecond})
	tr.Close()

	fmt.Print(file.String())
	fmt.Println()
	tracer.WriteTimeline(os.Stdout, mem.Events())
	// Output:
	// {"format":"treelang-trace","version":1}
	// {"seq":1,"time":"2025-01-02T03:04:05.001Z","kind":"run.start"}
	// {"seq":2,"time":"2025-01-02T03:04:05.002Z","kind":"tool.attempt.start","site":"/body/0","attempt":1,"tool":"add","arguments":{"a":1,"b":0.5},"branch":0}
	// {"seq":3,"time":"2025-01-02T03:04:05.003Z","kind":"run.end","output":1.5,"duration_ms":2}
	//
	//      1     +0.000ms  run.start
	//      2     +1.000ms  tool.attempt.start /body/0 add attempt 1 branch 0 args={"a":1,"b":0.5}
	//      3     +2.000ms  run.end => 1.5 (2ms)
	// ---
	// result: 1.5
	// events: 3, tool attempts: 1, retries: 0, failures: 0, cancellations: 0, duration: 2ms
}

func ExampleGate() {
	gate := tracer.NewGate()
	gate.SetBreakpoints([]tracer.Breakpoint{{ID: 1, Kind: tracer.BreakTool, Tool: "fetch", Attempt: 2}})
	paused := make(chan string, 1)
	gate.OnPause(func(e *tracer.Event, hit *tracer.Breakpoint) { paused <- hit.String() })
	tr := tracer.New()
	tr.SetGate(gate)

	done := make(chan error)
	go func() {
		// The engine: the second attempt of fetch pauses here.
		done <- tr.Emit(context.Background(), &tracer.Event{Kind: tracer.ToolAttemptStart, Tool: "fetch",
			Site: tracer.Site{Path: "/body/0", Attempt: 2}})
	}()
	fmt.Println("paused at", <-paused)
	gate.Continue() // the user lets it run
	fmt.Println("resumed:", <-done)
	// Output:
	// paused at #1 tool fetch attempt 2
	// resumed: <nil>
}
