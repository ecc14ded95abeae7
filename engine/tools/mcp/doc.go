// Package mcp connects Treelang to Model Context Protocol servers, both
// ways, on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// As a client, ConnectStdio (a command run without a shell; see
// ParseCommand) and ConnectHTTP (streamable HTTP, with headers such as
// Authorization that are never printed) return a *Provider, an
// engine.ToolProvider:
//
//   - ListTools asks the server once and caches the definitions. Property
//     order is the input schema's exactly as the server sent it, because
//     schema 1.0 binds positional parameters by that order: the SDK hands
//     clients schemas as Go maps, so the raw JSON-RPC result is captured
//     underneath it (see capture.go) and definitions are built from those
//     bytes with engine.ParseToolDefinition. MCP annotations are kept on
//     each definition; they are hints, trusted for retries only when the
//     policy opts in through IdempotentByHint.
//   - CallTool sends the arguments exactly as evaluated and decodes the
//     result like the Python MCPToolProvider: an error result is a
//     ToolExecutionError with the server's text; structuredContent is used
//     as-is; JSON (or Python-literal) text is decoded, several text items
//     giving a list. Numbers stay json.Number.
//   - Failures of the server itself (it exited, the connection broke, a
//     malformed result) are ProviderResponseErrors naming the server; a
//     stdio server's exit status and the tail of its stderr are quoted.
//
// The tool list is not refreshed: notifications/tools/list_changed is
// ignored for the life of a Provider, as the Python provider caches too.
//
// As a server, NewServer, Serve, ServeStdio, HTTPHandler and ServeHTTP
// (loopback only) expose any engine.ToolProvider (builtin or scripted
// toolboxes) to MCP clients; this is `treelang tools serve`.
//
// Concurrency: a Provider is safe for concurrent use; calls are
// multiplexed on one session and run concurrently on the server. The
// server side runs each call on its own goroutine.
//
// Cancellation: when a CallTool's context ends, CallTool returns the
// context's error at once (context.Canceled, or DeadlineExceeded which
// engine.TypeOf reports as TimeoutError) and the SDK sends the server
// notifications/cancelled for the request without making the caller wait;
// over HTTP with protocol 2026-07-28 the aborted POST itself cancels the
// call. WithCallTimeout bounds calls with a TimeoutError. On the server
// side, a client's cancellation cancels the context passed to the
// provider's CallTool, so scripted delays end early, and stopping a server
// (ctx of Serve or ServeHTTP) cancels the calls it is running. Close
// cancels the Provider's calls in flight (they fail with a
// ProviderResponseError), ends the session and stops a stdio server: its
// stdin is closed, then SIGTERM and SIGKILL follow after short grace
// periods. No goroutine of the Provider outlives Close, apart from the
// SDK's best-effort cancellation notices, which end once the connection is
// closed.
package mcp
