package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/treelang/treelang/engine"
)

// Version is reported to MCP peers as the implementation version.
const Version = "0.1.0"

// DefaultConnectTimeout bounds connecting and the MCP initialization
// handshake when the caller's context has no deadline of its own, so a
// command that is not an MCP server fails instead of hanging.
const DefaultConnectTimeout = 60 * time.Second

// Option configures a Provider.
type Option func(*options)

type options struct {
	callTimeout time.Duration
	httpClient  *http.Client
}

// WithCallTimeout bounds every tool call. A call that takes longer is
// cancelled on the server (notifications/cancelled) and fails with a
// TimeoutError. Zero, the default, leaves calls bounded only by their
// context.
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) { o.callTimeout = d }
}

// WithHTTPClient sets the HTTP client ConnectHTTP uses (its Transport is
// wrapped to add the headers). The default is a client without a timeout,
// since responses may be long-lived event streams.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.httpClient = c }
}

// Provider is an engine.ToolProvider backed by one MCP server session.
// It is safe for concurrent use; see the package documentation.
type Provider struct {
	label   string // "MCP server 'CMD'" or "MCP server 'URL'", never secrets
	opts    options
	session *sdk.ClientSession
	proc    *process // nil over HTTP

	listMu   sync.Mutex // serializes the first listing
	mu       sync.RWMutex
	listed   bool
	defs     []*engine.ToolDefinition
	byName   map[string]*engine.ToolDefinition
	warnings []string

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	// lifetime ends when Close starts: requests in flight are cancelled
	// then, because the SDK's session close waits for outstanding calls.
	lifetime context.Context
	shutdown context.CancelFunc
}

var _ engine.ToolProvider = (*Provider)(nil)

func newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "treelang", Version: Version}, nil)
}

func connectContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, connectTimeout)
}

// connectTimeout is DefaultConnectTimeout, shortened by tests.
var connectTimeout = DefaultConnectTimeout

// ConnectStdio starts command with args (directly, never through a shell)
// and opens an MCP session over its stdin and stdout. env entries
// ("KEY=VALUE") are added to the inherited environment, later entries
// winning; nil inherits it unchanged. The server's stderr is kept for error
// messages, not printed. The process belongs to the Provider: Close stops it.
// ctx bounds only the start and the handshake (DefaultConnectTimeout when
// it has no deadline). Failures are ProviderResponseErrors that name the
// command, never its environment.
func ConnectStdio(ctx context.Context, command string, args []string, env []string, opts ...Option) (*Provider, error) {
	if command == "" {
		return nil, engine.Errorf(engine.ValueError, "empty MCP server command")
	}
	p := newProvider(fmt.Sprintf("MCP server '%s'", displayCommand(command, args)), opts)
	proc, err := startProcess(command, args, env)
	if err != nil {
		p.shutdown()
		return nil, &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s could not start: %v", p.label, err), Err: err}
	}
	p.proc = proc
	cctx, cancel := connectContext(ctx)
	defer cancel()
	t := &captureTransport{inner: &sdk.IOTransport{Reader: proc.stdout, Writer: proc.stdin}}
	session, err := newClient().Connect(cctx, t, nil)
	if err != nil {
		err = p.connectError(ctx, cctx, err)
		p.shutdown()
		proc.closePipes()
		proc.stop()
		return nil, err
	}
	p.session = session
	return p, nil
}

// ConnectHTTP opens an MCP session with the streamable HTTP server at
// rawURL. headers (for example Authorization read from the environment)
// are sent with every request; they never appear in errors or messages,
// and neither do the URL's user info and query. ctx bounds only the
// handshake (DefaultConnectTimeout when it has no deadline).
func ConnectHTTP(ctx context.Context, rawURL string, headers http.Header, opts ...Option) (*Provider, error) {
	label := fmt.Sprintf("MCP server '%s'", redactURL(rawURL))
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, engine.Errorf(engine.ValueError, "%s: the URL must be an absolute http or https URL", label)
	}
	p := newProvider(label, opts)
	base := p.opts.httpClient
	if base == nil {
		base = &http.Client{}
	}
	client := *base
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	client.Transport = &headerTransport{base: rt, headers: headers.Clone()}
	t := &sdk.StreamableClientTransport{
		Endpoint:   rawURL,
		HTTPClient: &client,
		// Tool calls only need the responses to their own POSTs.
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	cctx, cancel := connectContext(ctx)
	defer cancel()
	session, err := newClient().Connect(cctx, t, nil)
	if err != nil {
		p.shutdown()
		return nil, p.connectError(ctx, cctx, err)
	}
	p.session = session
	return p, nil
}

func newProvider(label string, opts []Option) *Provider {
	p := &Provider{label: label, closed: make(chan struct{})}
	p.lifetime, p.shutdown = context.WithCancel(context.Background())
	for _, o := range opts {
		o(&p.opts)
	}
	return p
}

// redactURL drops user info, query and fragment, which may hold secrets.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	return u.String()
}

// scrub removes the raw URL (which net/http quotes in its errors) from
// an error message.
func (p *Provider) scrub(msg string, rawURL string) string {
	if rawURL == "" {
		return msg
	}
	return strings.ReplaceAll(msg, rawURL, redactURL(rawURL))
}

func (p *Provider) connectError(ctx, cctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if cctx.Err() != nil {
		return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s did not complete the MCP handshake within %s", p.label, connectTimeout), Err: err}
	}
	// A server that exits breaks the connection just before Wait returns.
	if p.proc != nil && p.proc.exited(time.Second) {
		return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s exited: %s", p.label, p.proc.describeExit()), Err: err}
	}
	return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s: connection failed: %s", p.label, p.cleanErr(err)), Err: err}
}

// cleanErr renders err without URLs' secrets.
func (p *Provider) cleanErr(err error) string {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = p.scrub(msg, ue.URL)
	}
	return msg
}

// ListTools lists the server's tools once and caches them: later calls
// return the same definitions without asking the server again. Each
// definition keeps its input schema's property order exactly as the server
// sent it, and carries the tool's MCP annotations.
func (p *Provider) ListTools(ctx context.Context) ([]*engine.ToolDefinition, error) {
	p.mu.RLock()
	if p.listed {
		defs := p.defs
		p.mu.RUnlock()
		return defs, nil
	}
	p.mu.RUnlock()
	p.listMu.Lock()
	defer p.listMu.Unlock()
	p.mu.RLock()
	listed, defs := p.listed, p.defs
	p.mu.RUnlock()
	if listed {
		return defs, nil
	}
	defs, warnings, err := p.fetchTools(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*engine.ToolDefinition, len(defs))
	for _, d := range defs {
		byName[d.Name] = d
	}
	p.mu.Lock()
	p.defs, p.byName, p.warnings, p.listed = defs, byName, warnings, true
	p.mu.Unlock()
	return defs, nil
}

func (p *Provider) fetchTools(ctx context.Context) ([]*engine.ToolDefinition, []string, error) {
	var defs []*engine.ToolDefinition
	var warnings []string
	seen := map[string]bool{}
	var cursor string
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, nil, engine.Errorf(engine.ProviderResponseError, "%s keeps paginating its tool list", p.label)
		}
		cctx, stop := p.bound(ctx)
		cctx, capture := withCapture(cctx)
		res, err := p.session.ListTools(cctx, &sdk.ListToolsParams{Cursor: cursor})
		capture.done()
		stop()
		if err != nil {
			return nil, nil, p.requestError(ctx, "listing tools", err)
		}
		raws := map[string]json.RawMessage{}
		if raw, ok := capture.load(); ok {
			var wire struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if json.Unmarshal(raw, &wire) == nil {
				for _, t := range wire.Tools {
					var n struct {
						Name string `json:"name"`
					}
					if json.Unmarshal(t, &n) == nil {
						raws[n.Name] = t
					}
				}
			}
		}
		for _, tool := range res.Tools {
			if tool == nil || seen[tool.Name] {
				continue
			}
			seen[tool.Name] = true
			raw, ok := raws[tool.Name]
			if !ok {
				// No raw bytes: the SDK's map has lost the order, so
				// properties come out sorted. Say so.
				b, err := json.Marshal(tool)
				if err != nil {
					return nil, nil, engine.Errorf(engine.ProviderResponseError, "%s: tool '%s' cannot be encoded: %v", p.label, tool.Name, err)
				}
				raw = b
				warnings = append(warnings, fmt.Sprintf("tool '%s': property order unavailable, using sorted names", tool.Name))
			}
			def, err := definitionFromMCP(raw)
			if err != nil {
				return nil, nil, err
			}
			if w := annotationWarning(def); w != "" {
				warnings = append(warnings, w)
			}
			defs = append(defs, def)
		}
		cursor = res.NextCursor
		if cursor == "" {
			return defs, warnings, nil
		}
	}
}

// definitionFromMCP builds a definition from a raw MCP Tool object.
func definitionFromMCP(raw []byte) (*engine.ToolDefinition, error) {
	var wire struct {
		Name        json.RawMessage `json:"name"`
		Description json.RawMessage `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, engine.Errorf(engine.ProviderResponseError, "Tool definition must be a mapping")
	}
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	b.Write(orNull(wire.Name))
	if len(wire.Description) > 0 {
		b.WriteString(`,"description":`)
		b.Write(wire.Description)
	}
	schema := wire.InputSchema
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	b.WriteString(`,"input_schema":`)
	b.Write(schema)
	if ann := annotationsJSON(wire.Annotations); ann != nil {
		b.WriteString(`,"annotations":`)
		b.Write(ann)
	}
	b.WriteByte('}')
	return engine.ParseToolDefinition(b.Bytes(), "")
}

func orNull(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}

// annotationsJSON keeps the four boolean hints of MCP annotations (title
// and unknown keys are dropped; hints that are not booleans are ignored).
func annotationsJSON(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var a engine.Annotations
	for key, dst := range map[string]**bool{
		"readOnlyHint":    &a.ReadOnly,
		"destructiveHint": &a.Destructive,
		"idempotentHint":  &a.Idempotent,
		"openWorldHint":   &a.OpenWorld,
	} {
		var v bool
		if r, ok := m[key]; ok && json.Unmarshal(r, &v) == nil {
			*dst = &v
		}
	}
	if a == (engine.Annotations{}) {
		return nil
	}
	out, _ := json.Marshal(a)
	return out
}

// annotationWarning flags a tool that declares itself both destructive and
// idempotent: retrying it is only safe if the idempotent hint is true.
func annotationWarning(def *engine.ToolDefinition) string {
	a := def.Annotations
	if a == nil || a.Idempotent == nil || !*a.Idempotent || a.Destructive == nil || !*a.Destructive {
		return ""
	}
	if a.ReadOnly != nil && *a.ReadOnly {
		return "" // destructiveHint is meaningless for a read-only tool
	}
	return fmt.Sprintf("tool '%s' is destructive but listed as idempotent", def.Name)
}

// Tool returns the definition of the named tool, listing the tools first if
// they have not been listed yet, or a ToolNotFoundError.
func (p *Provider) Tool(ctx context.Context, name string) (*engine.ToolDefinition, error) {
	if _, err := p.ListTools(ctx); err != nil {
		return nil, err
	}
	p.mu.RLock()
	def, ok := p.byName[name]
	p.mu.RUnlock()
	if !ok {
		return nil, engine.NotFound(name)
	}
	return def, nil
}

// Annotations returns the MCP annotations of a listed tool, or nil when
// the tool has none or has not been listed.
func (p *Provider) Annotations(name string) *engine.Annotations {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if def, ok := p.byName[name]; ok {
		return def.Annotations
	}
	return nil
}

// Warnings returns what listing the tools found worth telling the user,
// such as "tool 'delete_all' is destructive but listed as idempotent".
func (p *Provider) Warnings() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]string(nil), p.warnings...)
}

// IdempotentByHint returns, in order, the names of the tools whose MCP
// annotations set idempotentHint to true. The hints are the server's
// claims: a policy adds these names to RetryPolicy.IdempotentTools only
// when the user opts in (--trust-idempotent-hints), never by default.
func IdempotentByHint(defs []*engine.ToolDefinition) []string {
	var names []string
	for _, d := range defs {
		if d != nil && d.Annotations != nil && d.Annotations.Idempotent != nil && *d.Annotations.Idempotent {
			names = append(names, d.Name)
		}
	}
	return names
}

// CallTool calls the tool on the server with the call's arguments, encoded
// exactly (numbers as written), and decodes the result like the Python
// MCPToolProvider (see decodeResult). An error result is a
// ToolExecutionError with the server's text. When ctx ends, CallTool
// returns ctx's error at once and the server is sent
// notifications/cancelled for the request. A server that has died gives a
// ProviderResponseError saying so.
func (p *Provider) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args := []byte("{}")
	if len(call.Arguments) > 0 {
		b, err := engine.EncodeValue(call.Arguments)
		if err != nil {
			return nil, engine.Errorf(engine.TypeError, "arguments of tool '%s' cannot be encoded as JSON: %v", call.Tool, err)
		}
		args = b
	}
	cctx, stop := p.bound(ctx)
	defer stop()
	if p.opts.callTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeoutCause(cctx, p.opts.callTimeout, errCallTimeout)
		defer cancel()
	}
	cctx, capture := withCapture(cctx)
	res, err := p.session.CallTool(cctx, &sdk.CallToolParams{Name: call.Tool, Arguments: json.RawMessage(args)})
	capture.done()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(context.Cause(cctx), errCallTimeout) {
			return nil, &engine.Error{Type: engine.TimeoutError, Message: fmt.Sprintf("Tool '%s' timed out after %s", call.Tool, p.opts.callTimeout), Err: context.DeadlineExceeded}
		}
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return nil, &engine.Error{Type: engine.ToolExecutionError, Message: fmt.Sprintf("Error calling tool %s: %s", call.Tool, werr.Message), Err: err}
		}
		return nil, p.requestError(ctx, fmt.Sprintf("calling tool '%s'", call.Tool), err)
	}
	raw, ok := capture.load()
	if !ok {
		b, err := json.Marshal(res)
		if err != nil {
			return nil, engine.Errorf(engine.ProviderResponseError, "%s: result of tool '%s' cannot be re-encoded: %v", p.label, call.Tool, err)
		}
		raw = b
	}
	return decodeResult(call.Tool, raw)
}

var errCallTimeout = errors.New("MCP tool call timed out")

// bound derives a request context that also ends when Close starts.
func (p *Provider) bound(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.lifetime, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// requestError explains a request that failed without a response: the
// server exited, the connection broke, or the caller gave up.
func (p *Provider) requestError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case <-p.closed:
		return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s: %s: the provider is closed", p.label, what), Err: err}
	default:
	}
	if p.proc != nil {
		// The connection drops as the process exits; give Wait a moment
		// to report how it ended.
		if p.proc.exited(2 * time.Second) {
			return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s exited: %s (while %s)", p.label, p.proc.describeExit(), what), Err: err}
		}
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s: %s: %s", p.label, what, werr.Message), Err: err}
	}
	return &engine.Error{Type: engine.ProviderResponseError, Message: fmt.Sprintf("%s: %s failed: %s", p.label, what, p.cleanErr(err)), Err: err}
}

// Close ends the session and, for a stdio server, stops the process: it
// closes the server's stdin, waits briefly for it to exit, then sends
// SIGTERM and finally SIGKILL to its process group. Calls still running
// fail. Close is idempotent.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.shutdown()
		if p.session != nil {
			err := p.session.Close()
			if err != nil && !errors.Is(err, sdk.ErrConnectionClosed) && p.proc == nil {
				p.closeErr = err
			}
		}
		if p.proc != nil {
			p.proc.closePipes()
			p.proc.stop()
		}
	})
	return p.closeErr
}
