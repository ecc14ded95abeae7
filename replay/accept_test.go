package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/replay"
	"github.com/treelang/treelang/tracer"
)

// acceptOnMismatch accepts every drift as soon as the replay reports it,
// as the debugger's accept key does.
type acceptOnMismatch struct{ rp *replay.ToolReplay }

func (a *acceptOnMismatch) Emit(_ context.Context, e *tracer.Event) error {
	if e.Kind == tracer.ReplayMismatch {
		a.rp.Accept()
	}
	return nil
}

func TestInteractiveAcceptReRecordsLive(t *testing.T) {
	text := `{"format":"treelang-fixture","version":1,"tools":[` + addTool + `],"calls":[
	 {"name":"add","arguments":{"a":2,"b":2},"output":4,"site":"/body/0","attempt":1,"started":1,"completed":2}]}`
	prog, err := engine.ParseProgram([]byte(`{"type":"program","mode":"single","body":[
	 {"type":"function","name":"add","params":[{"type":"value","name":"a","value":2},{"type":"value","name":"b","value":3}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	live := tools.Builtins()
	em := &acceptOnMismatch{}
	rp, _ := replay.NewToolReplay(fixture(t, text), replay.Options{Interactive: true, Live: live, Tracer: em, Stall: time.Second})
	em.rp = rp
	v, err := engine.Eval(context.Background(), prog, rp, engine.Options{Clock: rp.Clock()})
	if err != nil || fmt.Sprint(v) != "5" {
		t.Fatalf("got %v, %v; want the live result 5", v, err)
	}
	got := rp.Fixture().Calls[0]
	if got.Arguments["b"] != json.Number("3") || fmt.Sprint(got.Output) != "5" {
		t.Fatalf("the accepted call was not re-recorded: %+v", got)
	}
	if err := rp.AssertConsumed(); err != nil {
		t.Fatal(err)
	}
}
