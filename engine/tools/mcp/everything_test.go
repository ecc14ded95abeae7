package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
)

// everythingEnv points at the JS entry of @modelcontextprotocol/server-everything,
// installed by .ci/run with
//
//	npm install --prefix /tmp/mcp-everything @modelcontextprotocol/server-everything@latest
//
// and found at
// /tmp/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js.
// The server runs as `node PATH stdio`.
const everythingEnv = "TREELANG_MCP_EVERYTHING"

func everything(t *testing.T) *Provider {
	t.Helper()
	entry := os.Getenv(everythingEnv)
	if entry == "" {
		t.Skipf("%s is not set: install @modelcontextprotocol/server-everything with npm and point it at dist/index.js", everythingEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s is set but node is not on PATH: %v", everythingEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	p, err := ConnectStdio(ctx, node, []string{entry, "stdio"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func TestEverythingServer(t *testing.T) {
	p := everything(t)
	ctx := context.Background()

	t.Run("list", func(t *testing.T) {
		defs, err := p.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, d := range defs {
			names[d.Name] = true
		}
		for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
			if !names[want] {
				t.Fatalf("no tool %q among %v", want, names)
			}
		}
		sum, err := p.Tool(ctx, "get-sum")
		if err != nil {
			t.Fatal(err)
		}
		if got := sum.PropertyNames(); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Fatalf("get-sum properties %v", got)
		}
		long, _ := p.Tool(ctx, "trigger-long-running-operation")
		if got := long.PropertyNames(); !reflect.DeepEqual(got, []string{"duration", "steps"}) {
			t.Fatalf("trigger-long-running-operation properties %v, want the server's order", got)
		}
		// Zod keeps declaration order, which here is not alphabetical.
		if ann, err := p.Tool(ctx, "get-annotated-message"); err == nil {
			if got := ann.PropertyNames(); !reflect.DeepEqual(got, []string{"messageType", "includeImage"}) {
				t.Fatalf("get-annotated-message properties %v, want the server's order [messageType includeImage]", got)
			}
		} else {
			t.Logf("this server version has no get-annotated-message: %v", err)
		}
		if a := p.Annotations("echo"); a == nil || a.ReadOnly == nil || !*a.ReadOnly {
			t.Fatalf("echo annotations %+v, want readOnlyHint", a)
		}
		if hinted := IdempotentByHint(defs); !contains(hinted, "echo") {
			t.Fatalf("IdempotentByHint = %v, want echo among them", hinted)
		}
	})
	t.Run("echo", func(t *testing.T) {
		if got := mustCall(t, p, "echo", map[string]any{"message": "hello"}); got != "Echo: hello" {
			t.Fatalf("echo = %#v", got)
		}
	})
	t.Run("structured content", func(t *testing.T) {
		got := mustCall(t, p, "get-structured-content", map[string]any{"location": "Chicago"})
		m, ok := got.(map[string]any)
		if !ok || m["temperature"] != json.Number("36") {
			t.Fatalf("get-structured-content = %#v", got)
		}
	})
	t.Run("tool error", func(t *testing.T) {
		_, err := call(t, p, "get-sum", map[string]any{"a": "one", "b": json.Number("2")})
		e := errorOfType(t, err, engine.ToolExecutionError)
		if !strings.HasPrefix(e.Message, "Error calling tool get-sum: ") {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("cancel a long-running call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := p.CallTool(ctx, &engine.Call{Tool: "trigger-long-running-operation",
				Arguments: map[string]any{"duration": json.Number("60"), "steps": json.Number("60")}})
			done <- err
		}()
		// Give the request time to reach the server; cancelling earlier
		// is fine too, it just tests less.
		time.Sleep(200 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
		case <-time.After(hangLimit):
			t.Fatal("the cancelled call did not return")
		}
		// The server took the cancellation in stride.
		if got := mustCall(t, p, "echo", map[string]any{"message": "still here"}); got != "Echo: still here" {
			t.Fatalf("echo after cancel = %#v", got)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
