package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

// `treelang tools serve --tools FILE` keeps a scripted toolbox's behaviors:
// scripted failures come back as tool errors naming their type, delays are
// cancellable by the client, and property order survives.
func TestServeScriptedToolbox(t *testing.T) {
	tb, err := tools.Parse([]byte(`{"tools": [
	 {"name": "flaky", "properties": {"x": {"type": "integer"}},
	  "behavior": {"script": [{"error": "TimeoutError", "message": "upstream timed out"}], "then": {"output": "ok"}}},
	 {"name": "sleepy", "properties": {}, "behavior": {"output": 1, "delay_ms": 600000}},
	 {"name": "minus", "properties": {"b": {}, "a": {}}, "behavior": {"builtin": "subtract"}}
	]}`), "inline")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(tb))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	p, err := ConnectHTTP(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	minus, err := p.Tool(ctx, "minus")
	if err != nil {
		t.Fatal(err)
	}
	if got := minus.PropertyNames(); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Fatalf("minus properties %v", got)
	}
	if got := mustCall(t, p, "minus", map[string]any{"b": json.Number("10"), "a": json.Number("3")}); got != json.Number("7") {
		t.Fatalf("minus(10, 3) = %#v", got)
	}

	_, err = call(t, p, "flaky", map[string]any{"x": json.Number("1")})
	e := errorOfType(t, err, engine.ToolExecutionError)
	if e.Message != "Error calling tool flaky: TimeoutError: upstream timed out" {
		t.Fatalf("message %q", e.Message)
	}
	if got := mustCall(t, p, "flaky", map[string]any{"x": json.Number("1")}); got != "ok" {
		t.Fatalf("second flaky call = %#v", got)
	}

	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := p.CallTool(cctx, &engine.Call{Tool: "sleepy", Arguments: map[string]any{}})
		done <- err
	}()
	waitFor(t, "the delay to start on the server", func() bool { return tb.Active("sleepy") == 1 })
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(hangLimit):
		t.Fatal("the cancelled call did not return")
	}
	waitFor(t, "the server to cancel the delay", func() bool { return tb.Active("sleepy") == 0 })
}
