package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/treelang/treelang/engine"
)

// hangLimit only catches hangs: a test that waits this long has failed.
const hangLimit = 20 * time.Second

// serverHooks lets the shared checks observe the server side of a slow
// call, wherever the server runs.
type serverHooks struct {
	reset       func()                 // forget earlier slow calls
	waitStarted func(t *testing.T)     // blocks until a slow call runs on the server
	cancelled   func(t *testing.T) int // slow calls that observed cancellation so far
	// lossyCancel: a cancellation sent right after its request may
	// overtake it (HTTP sessions send them as separate POSTs), so the
	// deadline check, which cancels without waiting, is skipped.
	lossyCancel bool
}

// ownServerHooks observes the helper subprocess through its marker files.
func markerHooks(dir string) serverHooks {
	return serverHooks{
		reset: func() {
			os.Remove(filepath.Join(dir, "started"))
		},
		waitStarted: func(t *testing.T) {
			waitFor(t, "the server to start the slow call", func() bool {
				_, err := os.Stat(filepath.Join(dir, "started"))
				return err == nil
			})
		},
		cancelled: func(t *testing.T) int {
			data, err := os.ReadFile(filepath.Join(dir, "cancelled"))
			if err != nil {
				return 0
			}
			n, _ := strconv.Atoi(string(data))
			return n
		},
	}
}

// waitFor polls cond until it holds, failing the test if it never does.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func call(t *testing.T, p engine.ToolProvider, tool string, args map[string]any) (any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	return p.CallTool(ctx, &engine.Call{Tool: tool, Arguments: args})
}

func mustCall(t *testing.T, p engine.ToolProvider, tool string, args map[string]any) any {
	t.Helper()
	v, err := call(t, p, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return v
}

func errorOfType(t *testing.T, err error, typ engine.ErrorType) *engine.Error {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) || e.Type != typ {
		t.Fatalf("got error %v (%T), want a %s", err, err, typ)
	}
	return e
}

// checkOwnServer runs the checks shared by every way of reaching our own
// server (the test provider behind Serve).
func checkOwnServer(t *testing.T, p *Provider, hooks serverHooks) {
	ctx := context.Background()
	t.Run("list", func(t *testing.T) {
		defs, err := p.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
		}
		// The SDK's server lists tools by name; only property order matters.
		want := []string{"add", "cancellations", "delete_all", "die", "echo", "fail", "lookup", "object", "order", "slow"}
		if !reflect.DeepEqual(names, want) {
			t.Fatalf("tools %v, want %v", names, want)
		}
		order, err := p.Tool(ctx, "order")
		if err != nil {
			t.Fatal(err)
		}
		if got := order.PropertyNames(); !reflect.DeepEqual(got, []string{"z", "a", "m"}) {
			t.Fatalf("order's properties %v, want the server's order [z a m]", got)
		}
		if order.Description != "Reports its arguments in property order." {
			t.Fatalf("description %q", order.Description)
		}
		// A legacy definition is published with every property required.
		echo, _ := p.Tool(ctx, "echo")
		if err := echo.ValidateArguments(map[string]any{}); err == nil {
			t.Fatal("echo without text validated; the legacy schema requires it")
		}
		again, _ := p.ListTools(ctx)
		if &again[0] != &defs[0] {
			t.Fatal("second ListTools did not return the cached list")
		}
	})
	t.Run("annotations", func(t *testing.T) {
		if _, err := p.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		a := p.Annotations("delete_all")
		if a == nil || a.Destructive == nil || !*a.Destructive || a.Idempotent == nil || !*a.Idempotent {
			t.Fatalf("delete_all annotations %+v", a)
		}
		if p.Annotations("echo") != nil {
			t.Fatalf("echo has annotations %+v, it declared none", p.Annotations("echo"))
		}
		if w := p.Warnings(); !slices.Contains(w, "tool 'delete_all' is destructive but listed as idempotent") || len(w) != 1 {
			t.Fatalf("warnings %q", w)
		}
		defs, _ := p.ListTools(ctx)
		if got := IdempotentByHint(defs); !reflect.DeepEqual(got, []string{"delete_all", "lookup"}) {
			t.Fatalf("IdempotentByHint = %v", got)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		_, err := p.Tool(ctx, "nope")
		e := errorOfType(t, err, engine.ToolNotFoundError)
		if e.Message != "Tool 'nope' not found." {
			t.Fatalf("message %q", e.Message)
		}
		_, err = call(t, p, "nope", nil)
		errorOfType(t, err, engine.ToolExecutionError)
	})
	t.Run("values round-trip exactly", func(t *testing.T) {
		if got := mustCall(t, p, "echo", map[string]any{"text": "hello"}); got != "hello" {
			t.Fatalf("echo = %#v", got)
		}
		// A string that looks like a number stays a string.
		if got := mustCall(t, p, "echo", map[string]any{"text": "42"}); got != "42" {
			t.Fatalf("echo 42 = %#v", got)
		}
		got := mustCall(t, p, "add", map[string]any{"a": json.Number("9007199254740993"), "b": json.Number("1")})
		if got != json.Number("9007199254740994") {
			t.Fatalf("add = %#v, want exactly 9007199254740994", got)
		}
		obj := mustCall(t, p, "object", nil)
		want := map[string]any{"big": json.Number("9007199254740993"), "f": json.Number("0.30000000000000004"), "s": "x", "n": nil}
		if !reflect.DeepEqual(obj, want) {
			t.Fatalf("object = %#v", obj)
		}
		if got := mustCall(t, p, "order", map[string]any{"z": "Z", "a": "A"}); !reflect.DeepEqual(got, []any{"Z", "A"}) {
			t.Fatalf("order = %#v", got)
		}
		if got := mustCall(t, p, "lookup", map[string]any{"key": "k"}); got != nil {
			t.Fatalf("lookup = %#v, want null", got)
		}
	})
	t.Run("tool error", func(t *testing.T) {
		_, err := call(t, p, "fail", nil)
		e := errorOfType(t, err, engine.ToolExecutionError)
		if e.Message != "Error calling tool fail: ToolExecutionError: temporary" {
			t.Fatalf("message %q", e.Message)
		}
		_, err = call(t, p, "add", map[string]any{"a": "x", "b": json.Number("1")})
		e = errorOfType(t, err, engine.ToolExecutionError)
		if !strings.Contains(e.Message, "ASTValidationError: Tool 'add' input at 'a' violates the 'type' constraint") {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("concurrent calls", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := range 16 {
			wg.Go(func() {
				text := fmt.Sprint("call-", i)
				got, err := call(t, p, "echo", map[string]any{"text": text})
				if err == nil && got != text {
					err = fmt.Errorf("echo %q = %#v", text, got)
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		hooks.reset()
		before := hooks.cancelled(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := p.CallTool(ctx, &engine.Call{Tool: "slow", Arguments: map[string]any{}})
			done <- err
		}()
		hooks.waitStarted(t)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !engine.IsCancellation(err) {
				t.Fatalf("cancelled call returned %v, want context.Canceled", err)
			}
		case <-time.After(hangLimit):
			t.Fatal("CallTool did not return after its context was cancelled")
		}
		waitFor(t, "the server to see the cancellation", func() bool { return hooks.cancelled(t) > before })
		// The session is still usable.
		if got := mustCall(t, p, "echo", map[string]any{"text": "after"}); got != "after" {
			t.Fatalf("echo after cancel = %#v", got)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		if hooks.lossyCancel {
			t.Skip("a cancellation may overtake its request on this transport")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := p.CallTool(ctx, &engine.Call{Tool: "slow", Arguments: map[string]any{}})
		if !errors.Is(err, context.DeadlineExceeded) || engine.TypeOf(err) != engine.TimeoutError {
			t.Fatalf("got %v, want a deadline (TimeoutError)", err)
		}
	})
}

func ownStdio(t *testing.T, opts ...Option) (*Provider, string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	p, err := ConnectStdio(ctx, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=serve", markerEnv + "=" + dir, "GORACE=atexit_sleep_ms=0"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p, dir
}

func TestOwnServerStdio(t *testing.T) {
	p, dir := ownStdio(t)
	checkOwnServer(t, p, markerHooks(dir))
}

func TestCallTimeout(t *testing.T) {
	p, dir := ownStdio(t, WithCallTimeout(100*time.Millisecond))
	_, err := call(t, p, "slow", nil)
	e := errorOfType(t, err, engine.TimeoutError)
	if e.Message != "Tool 'slow' timed out after 100ms" {
		t.Fatalf("message %q", e.Message)
	}
	hooks := markerHooks(dir)
	waitFor(t, "the server to see the cancellation", func() bool { return hooks.cancelled(t) > 0 })
}

func TestServerExitsMidCall(t *testing.T) {
	p, _ := ownStdio(t)
	_, err := call(t, p, "die", nil)
	e := errorOfType(t, err, engine.ProviderResponseError)
	for _, want := range []string{"MCP server '", "exited: exit status 3", "dying on purpose"} {
		if !strings.Contains(e.Message, want) {
			t.Fatalf("message %q does not say %q", e.Message, want)
		}
	}
	// Later calls fail the same way instead of hanging.
	_, err = call(t, p, "echo", map[string]any{"text": "x"})
	e = errorOfType(t, err, engine.ProviderResponseError)
	if !strings.Contains(e.Message, "exited") {
		t.Fatalf("second call: %q", e.Message)
	}
}

func TestServerKilledMidCall(t *testing.T) {
	p, dir := ownStdio(t)
	hooks := markerHooks(dir)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, p, "slow", nil)
		done <- err
	}()
	hooks.waitStarted(t)
	if err := p.proc.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		e := errorOfType(t, err, engine.ProviderResponseError)
		if !strings.Contains(e.Message, "exited: signal: killed") {
			t.Fatalf("message %q", e.Message)
		}
	case <-time.After(hangLimit):
		t.Fatal("the call hung after its server was killed")
	}
}

func TestConnectStdioFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	t.Run("missing command", func(t *testing.T) {
		_, err := ConnectStdio(ctx, "treelang-no-such-mcp-server", []string{"--flag"}, nil)
		e := errorOfType(t, err, engine.ProviderResponseError)
		if !strings.HasPrefix(e.Message, "MCP server 'treelang-no-such-mcp-server --flag' could not start:") {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("exits at once", func(t *testing.T) {
		_, err := ConnectStdio(ctx, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=exit", "SECRET_TOKEN=hunter2"})
		e := errorOfType(t, err, engine.ProviderResponseError)
		if !strings.Contains(e.Message, "exited: exit status 7; stderr: helper: refusing to serve") {
			t.Fatalf("message %q", e.Message)
		}
		if strings.Contains(e.Message, "hunter2") {
			t.Fatalf("message %q shows the environment", e.Message)
		}
	})
	t.Run("never answers, default timeout", func(t *testing.T) {
		defer func(d time.Duration) { connectTimeout = d }(connectTimeout)
		connectTimeout = 200 * time.Millisecond
		_, err := ConnectStdio(context.Background(), os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=silent", "GORACE=atexit_sleep_ms=0"})
		e := errorOfType(t, err, engine.ProviderResponseError)
		if !strings.HasSuffix(e.Message, "did not complete the MCP handshake within 200ms") {
			t.Fatalf("message %q", e.Message)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := ConnectStdio(short, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=silent", "GORACE=atexit_sleep_ms=0"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the context's deadline", err)
		}
	})
}

func TestCloseIsIdempotent(t *testing.T) {
	p, _ := ownStdio(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, p, "echo", map[string]any{"text": "x"})
	errorOfType(t, err, engine.ProviderResponseError)
}

// BenchmarkStdioCall measures calls per second to our own server running
// as a subprocess over stdio:
//
//	go test -run '^$' -bench StdioCall ./engine/tools/mcp/
func BenchmarkStdioCall(b *testing.B) {
	ctx := context.Background()
	p, err := ConnectStdio(ctx, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=serve"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if _, err := p.ListTools(ctx); err != nil {
		b.Fatal(err)
	}
	call := &engine.Call{Tool: "add", Arguments: map[string]any{"a": json.Number("9007199254740993"), "b": json.Number("1")}}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		v, err := p.CallTool(ctx, call)
		if err != nil || v != json.Number("9007199254740994") {
			b.Fatalf("add = %v, %v", v, err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkStdioCallParallel is the same with calls in flight at once.
func BenchmarkStdioCallParallel(b *testing.B) {
	ctx := context.Background()
	p, err := ConnectStdio(ctx, os.Args[0], []string{"-test.run=^$"}, []string{helperEnv + "=serve"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	call := &engine.Call{Tool: "echo", Arguments: map[string]any{"text": "x"}}
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.CallTool(ctx, call); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// Closing the provider while a call runs ends the call on both sides.
func TestCloseDuringCall(t *testing.T) {
	p, dir := ownStdio(t)
	hooks := markerHooks(dir)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, p, "slow", nil)
		done <- err
	}()
	hooks.waitStarted(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		e := errorOfType(t, err, engine.ProviderResponseError)
		if !strings.Contains(e.Message, "the provider is closed") {
			t.Fatalf("message %q", e.Message)
		}
	case <-time.After(hangLimit):
		t.Fatal("the call hung after Close")
	}
	if hooks.cancelled(t) != 1 {
		t.Fatal("the server's slow call was not cancelled before the server exited")
	}
}
