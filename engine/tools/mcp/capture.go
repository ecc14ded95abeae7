package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK decodes results into Go maps with float64 numbers: a tool
// schema's property order and the exactness of large integers are gone by
// the time ClientSession.ListTools or CallTool returns. Treelang needs both
// (schema 1.0 binds positional parameters by property order; values keep
// JSON's exactness), so the provider captures the raw JSON-RPC result of
// each of its own requests underneath the SDK:
//
//   - the caller puts a *rawCapture in the request's context;
//   - over stdio, a Connection wrapper sees the request's ID when the SDK
//     writes it (jsonrpc2 writes synchronously with the caller's context)
//     and the raw result when the response is read;
//   - over streamable HTTP, wrapping the Connection would hide the SDK's
//     unexported session hooks (protocol version header), so an
//     http.RoundTripper tees the body of the POST that carries the request
//     (application/json or text/event-stream) and keeps the first response
//     message in it.
//
// In both cases the raw bytes are recorded before the SDK sees the message,
// so they are in place when the SDK call returns. A call whose capture is
// empty (a resumed SSE stream, a future SDK change) falls back to the SDK's
// decoded values.

type captureKey struct{}

// rawCapture receives the raw result of one request.
type rawCapture struct {
	mu      sync.Mutex
	result  json.RawMessage
	set     bool
	release func() // forgets the pending request, if any
}

// done drops whatever the capture still holds in the connection.
func (c *rawCapture) done() {
	c.mu.Lock()
	release := c.release
	c.release = nil
	c.mu.Unlock()
	if release != nil {
		release()
	}
}

func (c *rawCapture) store(raw json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set {
		return
	}
	c.result = append(json.RawMessage(nil), raw...)
	c.set = true
}

func (c *rawCapture) load() (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result, c.set
}

func withCapture(ctx context.Context) (context.Context, *rawCapture) {
	c := &rawCapture{}
	return context.WithValue(ctx, captureKey{}, c), c
}

func captureFrom(ctx context.Context) *rawCapture {
	c, _ := ctx.Value(captureKey{}).(*rawCapture)
	return c
}

// captureTransport wraps a stdio transport's connection.
type captureTransport struct {
	inner sdk.Transport
}

func (t *captureTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, pending: map[jsonrpc.ID]*rawCapture{}}, nil
}

type captureConn struct {
	sdk.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]*rawCapture
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	var capture *rawCapture
	if ok && req.IsCall() {
		capture = captureFrom(ctx)
	}
	if capture != nil {
		c.mu.Lock()
		c.pending[req.ID] = capture
		c.mu.Unlock()
	}
	err := c.Connection.Write(ctx, msg)
	if err != nil && capture != nil {
		c.forget(req.ID)
	}
	if capture != nil && err == nil {
		// The entry goes away when the response arrives; if it never does
		// (the caller gave up), the caller releases it.
		id := req.ID
		capture.mu.Lock()
		capture.release = func() { c.forget(id) }
		capture.mu.Unlock()
	}
	return err
}

func (c *captureConn) forget(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		capture := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if capture != nil && resp.Error == nil {
			capture.store(resp.Result)
		}
	}
	return msg, err
}

// headerTransport adds configured headers to every request and tees the
// response bodies of requests that carry a capture.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			if len(req.Header.Values(k)) > 0 {
				continue // the SDK's own protocol headers win
			}
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	if req.Method == http.MethodDelete {
		// Ending a session must not hang Close on a server that is busy
		// finishing (or never finishes) the session's calls.
		ctx, cancel := context.WithTimeout(req.Context(), deleteTimeout)
		resp, err := t.base.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	capture := captureFrom(req.Context())
	if capture == nil || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		resp.Body = &jsonTee{body: resp.Body, capture: capture}
	case "text/event-stream":
		resp.Body = &sseTee{body: resp.Body, capture: capture}
	}
	return resp, nil
}

// deleteTimeout bounds the DELETE that ends an HTTP session.
const deleteTimeout = 5 * time.Second

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// maxCapture bounds what a tee buffers for one message, as the SDK bounds
// its own frames.
const maxCapture = 16 << 20

// jsonTee records a single JSON-RPC response body at EOF.
type jsonTee struct {
	body    io.ReadCloser
	capture *rawCapture
	buf     bytes.Buffer
	done    bool
}

func (t *jsonTee) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if !t.done {
		if t.buf.Len()+n > maxCapture {
			t.done = true
			t.buf = bytes.Buffer{}
		} else {
			t.buf.Write(p[:n])
		}
		if err == io.EOF {
			t.done = true
			recordResponse(t.buf.Bytes(), t.capture)
			t.buf = bytes.Buffer{}
		}
	}
	return n, err
}

func (t *jsonTee) Close() error { return t.body.Close() }

// sseTee parses a server-sent event stream as it is read and records the
// first JSON-RPC response in it.
type sseTee struct {
	body    io.ReadCloser
	capture *rawCapture
	line    []byte
	data    bytes.Buffer
	done    bool
}

func (t *sseTee) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	if !t.done {
		t.feed(p[:n])
	}
	return n, err
}

func (t *sseTee) feed(chunk []byte) {
	for len(chunk) > 0 && !t.done {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			t.line = append(t.line, chunk...)
			if len(t.line) > maxCapture {
				t.done = true
			}
			return
		}
		t.line = append(t.line, chunk[:i]...)
		chunk = chunk[i+1:]
		t.handleLine(bytes.TrimSuffix(t.line, []byte("\r")))
		t.line = t.line[:0]
	}
}

func (t *sseTee) handleLine(line []byte) {
	if len(line) == 0 {
		if t.data.Len() > 0 {
			if recordResponse(t.data.Bytes(), t.capture) {
				t.done = true
			}
			t.data.Reset()
		}
		return
	}
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		rest = bytes.TrimPrefix(rest, []byte(" "))
		if t.data.Len() > 0 {
			t.data.WriteByte('\n')
		}
		if t.data.Len()+len(rest) > maxCapture {
			t.done = true
			return
		}
		t.data.Write(rest)
	}
}

func (t *sseTee) Close() error { return t.body.Close() }

// recordResponse stores the result of msg if it is a successful JSON-RPC
// response, and reports whether it was a response at all.
func recordResponse(msg []byte, capture *rawCapture) bool {
	var wire struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &wire) != nil || wire.Method != "" || len(wire.ID) == 0 {
		return false
	}
	if len(wire.Result) > 0 {
		capture.store(wire.Result)
	}
	return len(wire.Result) > 0 || len(wire.Error) > 0
}

// tailBuffer keeps the last bytes written to it (a server's stderr), to
// quote in error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String returns the last few non-empty lines.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	data := append([]byte(nil), t.buf...)
	t.mu.Unlock()
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			lines = append(lines, string(l))
		}
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(l)
	}
	return b.String()
}
