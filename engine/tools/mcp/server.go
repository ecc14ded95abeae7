package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/treelang/treelang/engine"
)

// NewServer builds an MCP server that exposes every tool of provider. The
// tools are listed once, here. Each tool's inputSchema lists its properties
// in definition order; a legacy (properties-only) definition is published
// as {"type":"object","properties":{...},"required":[all],
// "additionalProperties":false}. Calls go through provider.CallTool with
// the request's context, so a client's cancellation reaches the tool.
// Arguments are checked against the definition first. A value comes back
// as one text item holding its JSON, plus structuredContent when it is an
// object; an error comes back as an error result whose text is
// "{ErrorType}: {message}" (for example "ToolExecutionError: temporary").
func NewServer(ctx context.Context, provider engine.ToolProvider) (*sdk.Server, error) {
	return newServer(ctx, context.Background(), provider)
}

// newServer lists the tools with ctx; every call's context also ends when
// lifetime does, so stopping a server cancels the calls it is running
// (the SDK waits for them when it closes a session).
func newServer(ctx, lifetime context.Context, provider engine.ToolProvider) (*sdk.Server, error) {
	defs, err := provider.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	server := sdk.NewServer(&sdk.Implementation{Name: "treelang", Version: Version}, nil)
	for _, def := range defs {
		tool, err := toolFromDefinition(def)
		if err != nil {
			return nil, err
		}
		server.AddTool(tool, toolHandler(lifetime, provider, def))
	}
	return server, nil
}

// Serve runs an MCP server for provider over t until the client
// disconnects or ctx is cancelled.
func Serve(ctx context.Context, provider engine.ToolProvider, t sdk.Transport) error {
	server, err := newServer(ctx, ctx, provider)
	if err != nil {
		return err
	}
	err = server.Run(ctx, t)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ServeStdio serves provider over newline-delimited JSON-RPC on in and out
// (a process's stdin and stdout) until in reaches EOF or ctx is cancelled.
// in and out are closed when it returns if they are io.Closers.
func ServeStdio(ctx context.Context, provider engine.ToolProvider, in io.Reader, out io.Writer) error {
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	wc, ok := out.(io.WriteCloser)
	if !ok {
		wc = nopWriteCloser{out}
	}
	return Serve(ctx, provider, &sdk.IOTransport{Reader: rc, Writer: wc})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPHandler serves provider over MCP streamable HTTP. Its tools are
// listed on the first request; if that fails, requests get 503 and the
// listing is retried on the next one. Bind it to a loopback address: the
// handler has no authentication of its own (the SDK rejects requests whose
// Host is not localhost when they arrive on a loopback address).
func HTTPHandler(provider engine.ToolProvider) http.Handler {
	h := &httpHandler{provider: provider}
	h.handler = streamableHandler(func(*http.Request) *sdk.Server {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.server
	})
	return h
}

// ServeHTTP listens on addr and serves provider over streamable HTTP (any
// path) until ctx is cancelled; this is `treelang tools serve --http ADDR`.
// addr must be a loopback address such as "127.0.0.1:8080", "[::1]:0" or
// "localhost:0" (an empty host means 127.0.0.1): the server has no
// authentication, so it never listens on other interfaces. ready, if not
// nil, is called with the bound address once connections are accepted.
// On cancellation the listener closes, open sessions are closed and
// in-flight calls see their contexts cancelled; ServeHTTP then returns nil.
func ServeHTTP(ctx context.Context, provider engine.ToolProvider, addr string, ready func(net.Addr)) error {
	addr, err := loopbackAddr(addr)
	if err != nil {
		return err
	}
	server, err := newServer(ctx, ctx, provider)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	handler := streamableHandler(func(*http.Request) *sdk.Server { return server })
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	_ = srv.Close()
	<-errc
	for ss := range server.Sessions() {
		_ = ss.Close()
	}
	return nil
}

// streamableHandler serves both generations of the streamable HTTP
// transport. Clients on protocol 2026-07-28 or later (ours among them) send
// their version with every request and are served statelessly, each POST
// carrying one request whose cancellation (the client aborting the POST)
// cancels the tool call; there is no race between a request and its
// cancellation notice, which travel as separate POSTs. Older clients get
// the SDK's sessions, where notifications/cancelled cancels a call.
func streamableHandler(getServer func(*http.Request) *sdk.Server) http.Handler {
	stateful := sdk.NewStreamableHTTPHandler(getServer, nil)
	stateless := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Protocol versions are dates, so they compare as strings.
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessProtocol {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// statelessProtocol is the first MCP version whose HTTP transport needs no
// session (SEP-2575).
const statelessProtocol = "2026-07-28"

// loopbackAddr checks that addr names a loopback interface.
func loopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", engine.Errorf(engine.ValueError, "invalid listen address %q: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", engine.Errorf(engine.ValueError, "invalid listen address %q: the port must be a number from 0 to 65535", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
		return "", engine.Errorf(engine.ValueError, "listen address %q is not a loopback address: the MCP server has no authentication, so it listens only on 127.0.0.1, ::1 or localhost", addr)
	}
	return net.JoinHostPort(host, port), nil
}

type httpHandler struct {
	provider engine.ToolProvider
	handler  http.Handler
	mu       sync.Mutex
	server   *sdk.Server
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	server := h.server
	var err error
	if server == nil {
		server, err = NewServer(r.Context(), h.provider)
		h.server = server
	}
	h.mu.Unlock()
	if err != nil {
		http.Error(w, "tool provider unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	h.handler.ServeHTTP(w, r)
}

func toolHandler(lifetime context.Context, provider engine.ToolProvider, def *engine.ToolDefinition) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(lifetime, cancel)()
		args := map[string]any{}
		if raw := bytes.TrimSpace(req.Params.Arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			v, err := engine.DecodeValue(raw)
			m, ok := v.(map[string]any)
			if err != nil || !ok {
				return errorResult(engine.Errorf(engine.TypeError, "Tool '%s' arguments must be a JSON object", def.Name)), nil
			}
			args = m
		}
		if err := def.ValidateArguments(args); err != nil {
			return errorResult(err), nil
		}
		out, err := provider.CallTool(ctx, &engine.Call{Tool: def.Name, Arguments: args})
		if err != nil {
			if ctx.Err() != nil {
				// The client cancelled (or went away): nobody reads this.
				return nil, ctx.Err()
			}
			return errorResult(err), nil
		}
		data, err := engine.EncodeValue(out)
		if err != nil {
			return errorResult(engine.Errorf(engine.TypeError, "Tool '%s' returned a value that is not JSON: %v", def.Name, err)), nil
		}
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}
		if _, ok := out.(map[string]any); ok {
			res.StructuredContent = json.RawMessage(data)
		}
		return res, nil
	}
}

func errorResult(err error) *sdk.CallToolResult {
	text := err.Error()
	if t := engine.TypeOf(err); t != "" {
		text = fmt.Sprintf("%s: %s", t, text)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// toolFromDefinition publishes a definition as an MCP tool.
func toolFromDefinition(def *engine.ToolDefinition) (*sdk.Tool, error) {
	schema, err := inputSchemaJSON(def)
	if err != nil {
		return nil, err
	}
	tool := &sdk.Tool{Name: def.Name, Description: def.Description, InputSchema: json.RawMessage(schema)}
	if a := def.Annotations; a != nil {
		ann := &sdk.ToolAnnotations{DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld}
		if a.ReadOnly != nil {
			ann.ReadOnlyHint = *a.ReadOnly
		}
		if a.Idempotent != nil {
			ann.IdempotentHint = *a.Idempotent
		}
		tool.Annotations = ann
	}
	return tool, nil
}

// inputSchemaJSON writes the definition's effective schema with its
// properties in definition order: "type" first, then the other keywords
// sorted, then "properties", then "required" and "additionalProperties"
// for legacy definitions.
func inputSchemaJSON(def *engine.ToolDefinition) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object"`)
	write := func(key string, v any) error {
		data, err := engine.EncodeValue(v)
		if err != nil {
			return engine.Errorf(engine.ProviderResponseError, "Tool '%s' input schema must be JSON serializable", def.Name)
		}
		b.WriteByte(',')
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(data)
		return nil
	}
	if def.InputSchema != nil {
		keys := make([]string, 0, len(def.InputSchema))
		for k := range def.InputSchema {
			if k != "type" && k != "properties" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := write(k, def.InputSchema[k]); err != nil {
				return nil, err
			}
		}
	}
	b.WriteString(`,"properties":{`)
	for i, p := range def.Properties {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Name)
		b.Write(k)
		b.WriteByte(':')
		schema := any(p.Schema)
		if p.Schema == nil {
			schema = map[string]any{}
		}
		data, err := engine.EncodeValue(schema)
		if err != nil {
			return nil, engine.Errorf(engine.ProviderResponseError, "Tool '%s' input schema must be JSON serializable", def.Name)
		}
		b.Write(data)
	}
	b.WriteByte('}')
	if def.InputSchema == nil {
		names := def.PropertyNames()
		if names == nil {
			names = []string{}
		}
		if err := write("required", names); err != nil {
			return nil, err
		}
		b.WriteString(`,"additionalProperties":false`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
