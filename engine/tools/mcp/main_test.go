package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/treelang/treelang/engine"
)

// helperEnv makes the test binary act as `treelang tools serve` over
// stdio with the test provider, instead of running tests: TestMain checks
// it before anything else, so nothing but the MCP protocol reaches stdout.
const helperEnv = "TREELANG_MCP_TEST_SERVER"

// markerEnv names a directory where the helper server writes "started"
// when a slow call begins and "cancelled" when it sees its cancellation.
const markerEnv = "TREELANG_MCP_TEST_MARKERS"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "serve":
		os.Exit(runHelperServer())
	case "exit":
		fmt.Fprintln(os.Stderr, "helper: refusing to serve")
		os.Exit(7)
	case "silent":
		// Reads its input and never answers, like a command that is not
		// an MCP server at all.
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	// No ignores needed: every goroutine the SDK starts for a session ends
	// when the session closes, and the best-effort cancellation notices end
	// once their connection is closed.
	goleak.VerifyTestMain(m)
}

func runHelperServer() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	p := newTestProvider()
	p.markerDir = os.Getenv(markerEnv)
	if err := ServeStdio(ctx, p, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "helper server:", err)
		return 1
	}
	return 0
}

// testProvider is a small engine.ToolProvider standing in for the builtin
// and scripted toolboxes.
type testProvider struct {
	defs          []*engine.ToolDefinition
	cancellations atomic.Int64
	markerDir     string // where a subprocess reports slow calls (see markers)
	mu            sync.Mutex
	started       chan string // tool names as slow calls start, if set
}

const testTools = `[
 {"name": "echo", "description": "Returns its text.", "properties": {"text": {"type": "string"}}},
 {"name": "add", "description": "Adds two integers exactly.", "input_schema": {"type": "object",
   "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
 {"name": "fail", "description": "Always fails.", "properties": {}},
 {"name": "slow", "description": "Blocks until cancelled.", "properties": {}},
 {"name": "cancellations", "description": "How many slow calls saw their cancellation.", "properties": {}},
 {"name": "order", "description": "Reports its arguments in property order.", "input_schema": {"type": "object",
   "properties": {"z": {"type": "string"}, "a": {"type": "string"}, "m": {"type": "string", "description": "optional"}},
   "required": ["z", "a"]}},
 {"name": "object", "description": "Returns an object with exact numbers.", "properties": {}},
 {"name": "die", "description": "Exits the server process.", "properties": {}},
 {"name": "delete_all", "description": "Deletes everything, idempotently.", "properties": {},
   "annotations": {"destructiveHint": true, "idempotentHint": true}},
 {"name": "lookup", "description": "A read-only lookup.", "properties": {"key": {"type": "string"}},
   "annotations": {"readOnlyHint": true, "idempotentHint": true, "destructiveHint": false}}
]`

func newTestProvider() *testProvider {
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(testTools), &raws); err != nil {
		panic(err)
	}
	p := &testProvider{}
	for _, raw := range raws {
		def, err := engine.ParseToolDefinition(raw, "")
		if err != nil {
			panic(err)
		}
		p.defs = append(p.defs, def)
	}
	return p
}

func (p *testProvider) ListTools(context.Context) ([]*engine.ToolDefinition, error) {
	return p.defs, nil
}

func (p *testProvider) Tool(_ context.Context, name string) (*engine.ToolDefinition, error) {
	for _, d := range p.defs {
		if d.Name == name {
			return d, nil
		}
	}
	return nil, engine.NotFound(name)
}

func (p *testProvider) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	args := call.Arguments
	switch call.Tool {
	case "echo":
		return args["text"], nil
	case "add":
		a, _ := new(big.Int).SetString(string(args["a"].(json.Number)), 10)
		b, _ := new(big.Int).SetString(string(args["b"].(json.Number)), 10)
		if a == nil || b == nil {
			return nil, engine.Errorf(engine.TypeError, "add needs integers")
		}
		return json.Number(new(big.Int).Add(a, b).String()), nil
	case "fail":
		return nil, engine.Errorf(engine.ToolExecutionError, "temporary")
	case "slow":
		p.mu.Lock()
		started := p.started
		p.mu.Unlock()
		if started != nil {
			started <- "slow"
		}
		if p.markerDir != "" {
			_ = os.WriteFile(filepath.Join(p.markerDir, "started"), nil, 0o644)
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * hangLimit):
			// Never hang a test run, even when a cancellation is lost.
			return nil, engine.Errorf(engine.ToolExecutionError, "slow call was never cancelled")
		}
		n := p.cancellations.Add(1)
		if p.markerDir != "" {
			_ = os.WriteFile(filepath.Join(p.markerDir, "cancelled"), []byte(strconv.FormatInt(n, 10)), 0o644)
		}
		return nil, ctx.Err()
	case "cancellations":
		return json.Number(strconv.FormatInt(p.cancellations.Load(), 10)), nil
	case "order":
		out := []any{}
		for _, name := range []string{"z", "a", "m"} {
			if v, ok := args[name]; ok {
				out = append(out, v)
			}
		}
		return out, nil
	case "object":
		return engine.DecodeValue([]byte(`{"big": 9007199254740993, "f": 0.30000000000000004, "s": "x", "n": null}`))
	case "die":
		fmt.Fprintln(os.Stderr, "dying on purpose")
		os.Exit(3)
	case "delete_all", "lookup":
		return nil, nil
	}
	return nil, engine.NotFound(call.Tool)
}
