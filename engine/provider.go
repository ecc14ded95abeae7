package engine

import (
	"context"
	"iter"

	"github.com/treelang/treelang/tracer"
)

// Call is one physical tool invocation as the engine hands it to a
// provider. Arguments were evaluated once and are shared by every attempt
// of the call; providers must not modify them.
type Call struct {
	Tool      string         // tool name, "functions." prefix already stripped
	Arguments map[string]any // validated arguments
	Site      tracer.Site    // node path, iteration indices and attempt number
}

// ToolProvider is the engine's boundary to tools: builtin and scripted
// toolboxes, MCP servers, recorders and replays all implement it.
//
// Tool returns the normalized definition of one tool, or a
// ToolNotFoundError "Tool '{name}' not found.". The engine looks tools up
// on every evaluation, as the Python library does, so it should be cheap.
// CallTool must honour ctx: when ctx is cancelled it returns promptly with
// ctx's error. Providers are called from many goroutines at once.
type ToolProvider interface {
	ListTools(ctx context.Context) ([]*ToolDefinition, error)
	Tool(ctx context.Context, name string) (*ToolDefinition, error)
	CallTool(ctx context.Context, call *Call) (any, error)
}

// NotFound is the ToolNotFoundError a provider returns for an unknown tool.
func NotFound(name string) error {
	return Errorf(ToolNotFoundError, "Tool '%s' not found.", name)
}

// ModelTransport is the engine's boundary to language models. A request
// and a completion are JSON values; Stream yields the completion's chunks
// in order and stops at the first error.
type ModelTransport interface {
	Complete(ctx context.Context, request map[string]any) (string, error)
	Stream(ctx context.Context, request map[string]any) iter.Seq2[string, error]
}
