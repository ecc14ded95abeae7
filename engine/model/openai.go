package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/treelang/treelang/engine"
)

// DefaultBaseURL is the OpenAI API, used when neither a flag nor
// OPENAI_BASE_URL names another endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// The environment variables ConfigFromEnv reads.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
)

// maxBody caps a response body, and maxLine one server-sent-event line, so
// a misbehaving server cannot exhaust memory.
const (
	maxBody      = 16 << 20
	maxLine      = 4 << 20
	maxErrorBody = 64 << 10
)

// errTimeout is the cause of a request context that ran out of the
// configured Timeout, telling it apart from the caller's own deadline.
var errTimeout = errors.New("model request timeout")

// OpenAIConfig configures an OpenAI transport.
type OpenAIConfig struct {
	// BaseURL is the API root, such as https://api.openai.com/v1 or
	// http://127.0.0.1:8080/v1; requests go to BaseURL + "/chat/completions".
	// Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer KEY". It is required unless
	// BaseURL is a loopback address (local servers usually need none); with
	// no key, no Authorization header is sent.
	APIKey string
	// Model fills the request's "model" field when the request has none.
	Model string
	// Timeout bounds each request, from sending it to the last byte of the
	// response (for Stream, the whole stream). Zero means no limit beyond
	// the caller's context.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a client with Go's default
	// transport.
	HTTPClient *http.Client
}

// ConfigFromEnv returns flags with an empty BaseURL or APIKey filled from
// OPENAI_BASE_URL or OPENAI_API_KEY: values given as flags win over the
// environment. Other fields are returned as given.
func ConfigFromEnv(flags OpenAIConfig) OpenAIConfig {
	cfg := flags
	if cfg.BaseURL == "" {
		cfg.BaseURL = strings.TrimSpace(os.Getenv(EnvBaseURL))
	}
	if cfg.APIKey == "" {
		cfg.APIKey = strings.TrimSpace(os.Getenv(EnvAPIKey))
	}
	return cfg
}

// OpenAI is an engine.ModelTransport for an OpenAI-compatible
// chat-completions endpoint. It is safe for concurrent use.
type OpenAI struct {
	cfg      OpenAIConfig
	base     string // BaseURL without a trailing slash or credentials, for messages
	endpoint string // where requests go
	shown    string // endpoint without credentials, for messages
	client   *http.Client
}

var _ engine.ModelTransport = (*OpenAI)(nil)

// NewOpenAI checks cfg and returns a transport. A missing key (for a
// non-loopback endpoint) is a ModelAuthenticationError; a malformed base URL
// or a negative timeout is a ValueError. Nothing is sent.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, engine.Errorf(engine.ValueError, "invalid model base URL %q: want http(s)://HOST[:PORT][/PATH]", redactURL(cfg.BaseURL))
	}
	if cfg.APIKey == "" && !isLoopback(u.Hostname()) {
		return nil, engine.Errorf(engine.ModelAuthError, "%s is not set; pass --api-key or set the environment variable", EnvAPIKey)
	}
	if cfg.Timeout < 0 {
		return nil, engine.Errorf(engine.ValueError, "model timeout must not be negative, got %s", cfg.Timeout)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	base := u.Redacted()
	u = u.JoinPath("chat", "completions") // keeps a query such as ?api-version=...
	return &OpenAI{cfg: cfg, base: base, endpoint: u.String(), shown: u.Redacted(), client: client}, nil
}

// Endpoint returns the URL requests are sent to, with any credentials in
// the base URL masked.
func (o *OpenAI) Endpoint() string { return o.shown }

// Complete sends request and returns choices[0].message.content. A "stream"
// field in request is dropped.
func (o *OpenAI) Complete(ctx context.Context, request map[string]any) (string, error) {
	reqCtx, cancel := o.requestContext(ctx)
	defer cancel()
	resp, err := o.post(ctx, reqCtx, request, false)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := o.readBody(ctx, reqCtx, resp.Body)
	if err != nil {
		return "", err
	}
	return o.parseCompletion(body)
}

// Stream sends request with "stream": true and yields the content chunks of
// the server-sent events until "data: [DONE]". Empty chunks are skipped.
// The request is sent when the iteration starts; breaking out of the loop
// cancels it and closes the response body. An endpoint that answers with a
// plain JSON completion instead of events yields its content as one chunk.
func (o *OpenAI) Stream(ctx context.Context, request map[string]any) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		reqCtx, cancel := o.requestContext(ctx)
		defer cancel()
		resp, err := o.post(ctx, reqCtx, request, true)
		if err != nil {
			yield("", err)
			return
		}
		defer resp.Body.Close()
		if mediaType(resp.Header.Get("Content-Type")) == "application/json" {
			body, err := o.readBody(ctx, reqCtx, resp.Body)
			if err != nil {
				yield("", err)
				return
			}
			text, err := o.parseCompletion(body)
			if err != nil {
				yield("", err)
			} else if text != "" {
				yield(text, nil)
			}
			return
		}
		for chunk, err := range o.events(resp.Body) {
			if err != nil {
				var typed engine.Typed
				if !errors.As(err, &typed) {
					err = o.failure(ctx, reqCtx, err, "while reading the stream")
				}
				yield("", err)
				return
			}
			if !yield(chunk, nil) {
				return
			}
		}
	}
}

// requestContext applies the configured timeout to one request.
func (o *OpenAI) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.cfg.Timeout > 0 {
		return context.WithTimeoutCause(ctx, o.cfg.Timeout, errTimeout)
	}
	return context.WithCancel(ctx)
}

// post sends the request and returns a 2xx response whose body the caller
// closes; any other status becomes an error here.
func (o *OpenAI) post(ctx, reqCtx context.Context, request map[string]any, stream bool) (*http.Response, error) {
	body := make(map[string]any, len(request)+2)
	maps.Copy(body, request)
	if _, ok := body["model"]; !ok && o.cfg.Model != "" {
		body["model"] = o.cfg.Model
	}
	delete(body, "stream")
	if stream {
		body["stream"] = true
	}
	data, err := engine.EncodeValue(body)
	if err != nil {
		return nil, engine.Errorf(engine.ValueError, "model request is not a JSON value: %v", err)
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, o.endpoint, bytes.NewReader(data))
	if err != nil {
		return nil, engine.Errorf(engine.ValueError, "cannot build a request for %s: %v", o.base, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, o.failure(ctx, reqCtx, err, "")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		text, _ := readLimited(resp.Body, maxErrorBody)
		return nil, o.statusError(resp, text)
	}
	return resp, nil
}

// failure classifies an error from sending a request or reading its
// response: the caller's cancellation, a timeout, or a connection failure.
func (o *OpenAI) failure(ctx, reqCtx context.Context, err error, during string) error {
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		if cause == context.DeadlineExceeded {
			return &engine.Error{Type: engine.ModelTimeoutError, Err: cause,
				Message: fmt.Sprintf("model request to %s timed out: the deadline passed", o.Endpoint())}
		}
		return cause
	}
	var netErr net.Error
	if context.Cause(reqCtx) == errTimeout || (errors.As(err, &netErr) && netErr.Timeout()) {
		msg := fmt.Sprintf("model request to %s timed out", o.Endpoint())
		if o.cfg.Timeout > 0 {
			msg += " after " + o.cfg.Timeout.String()
		}
		return &engine.Error{Type: engine.ModelTimeoutError, Message: msg, Err: context.DeadlineExceeded}
	}
	reason := o.redact(connectionReason(err))
	if during != "" {
		return &engine.Error{Type: engine.ModelConnectionError, Err: err,
			Message: fmt.Sprintf("connection to %s failed %s: %s", o.base, during, reason)}
	}
	return &engine.Error{Type: engine.ModelConnectionError, Err: err,
		Message: fmt.Sprintf("cannot reach %s: %s", o.base, reason)}
}

// connectionReason is the short cause of a network error: "connection
// refused", "no such host", "EOF".
func connectionReason(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "cannot resolve " + dnsErr.Name + ": " + dnsErr.Err
	}
	var sysErr *os.SyscallError
	if errors.As(err, &sysErr) {
		return sysErr.Err.Error()
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Err.Error()
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

// StatusError is the cause of an *engine.Error for a non-2xx answer: the
// HTTP status, the server's error message and, for 429, how long the server
// asked to wait. Find it with errors.As.
type StatusError struct {
	StatusCode int
	Message    string        // the server's error message, with the API key masked
	RetryAfter time.Duration // from Retry-After; zero when absent
}

// Error returns "HTTP 429: message".
func (e *StatusError) Error() string {
	if e.Message == "" {
		return "HTTP " + strconv.Itoa(e.StatusCode)
	}
	return "HTTP " + strconv.Itoa(e.StatusCode) + ": " + e.Message
}

// statusError maps a non-2xx response to the model error types.
func (o *OpenAI) statusError(resp *http.Response, body []byte) error {
	se := &StatusError{StatusCode: resp.StatusCode, Message: o.redact(errorMessage(body))}
	status := strconv.Itoa(resp.StatusCode)
	if text := http.StatusText(resp.StatusCode); text != "" {
		status += " " + text
	}
	detail := ""
	if se.Message != "" {
		detail = ": " + se.Message
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		if o.cfg.APIKey == "" {
			return &engine.Error{Type: engine.ModelAuthError, Err: se,
				Message: fmt.Sprintf("model endpoint %s wants an API key (HTTP %s)%s; pass --api-key or set %s", o.base, status, detail, EnvAPIKey)}
		}
		return &engine.Error{Type: engine.ModelAuthError, Err: se,
			Message: fmt.Sprintf("model endpoint %s rejected the API key (HTTP %s)%s", o.base, status, detail)}
	case http.StatusTooManyRequests:
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		wait := ""
		if se.RetryAfter > 0 {
			wait = ", retry after " + se.RetryAfter.String()
		}
		return &engine.Error{Type: engine.ModelRateLimitError, Err: se,
			Message: fmt.Sprintf("model endpoint %s is rate limiting requests (HTTP %s%s)%s", o.base, status, wait, detail)}
	}
	return &engine.Error{Type: engine.ModelTransportError, Err: se,
		Message: fmt.Sprintf("model endpoint %s returned HTTP %s%s", o.base, status, detail)}
}

// parseRetryAfter reads a Retry-After header: delay seconds (fractions
// allowed, as some servers send them) or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 1e9 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

// errorMessage extracts the message of an error body: {"error": {"message":
// ...}}, {"error": "..."}, {"message": "..."} or, failing those, the text
// itself, shortened.
func errorMessage(body []byte) string {
	var shape struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &shape) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(shape.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(shape.Error, &s) == nil && s != "":
			return s
		case shape.Message != "":
			return shape.Message
		}
	}
	text := strings.Join(strings.Fields(string(body)), " ")
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return text
}

// chatResponse is the part of a chat completion, or of one stream event,
// that the transport reads.
type chatResponse struct {
	Choices []struct {
		Message *struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		Delta *struct {
			Content *string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// decodeResponse decodes a completion or stream event, keeping numbers
// exact, and reports an "error" member the server put in a 2xx body.
func (o *OpenAI) decodeResponse(data []byte) (*chatResponse, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var r chatResponse
	if err := dec.Decode(&r); err != nil {
		return nil, engine.Errorf(engine.ProviderResponseError, "model endpoint %s sent a response that is not a chat completion: %v", o.base, err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, &engine.Error{Type: engine.ModelTransportError,
			Message: fmt.Sprintf("model endpoint %s reported an error: %s", o.base, o.redact(errorMessage(data)))}
	}
	return &r, nil
}

// parseCompletion returns choices[0].message.content of a completion body.
func (o *OpenAI) parseCompletion(body []byte) (string, error) {
	r, err := o.decodeResponse(body)
	if err != nil {
		return "", err
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil {
		return "", engine.Errorf(engine.ProviderResponseError, "model endpoint %s sent a completion without choices[0].message", o.base)
	}
	m := r.Choices[0].Message
	if m.Content == nil {
		if m.Refusal != nil && *m.Refusal != "" {
			return "", engine.Errorf(engine.ProviderResponseError, "the model refused: %s", o.redact(*m.Refusal))
		}
		return "", engine.Errorf(engine.ProviderResponseError, "model endpoint %s sent a completion without text content", o.base)
	}
	return *m.Content, nil
}

// events parses a server-sent-event stream and yields the non-empty content
// chunks. Lines may arrive split across reads and end in \n or \r\n;
// comment lines (":...") and fields other than data are ignored; an event's
// data lines are joined with newlines. A read error is yielded as is for
// the caller to classify.
func (o *OpenAI) events(body io.Reader) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 64<<10), maxLine)
		var data []string
		// dispatch handles one complete event; it reports whether to go on.
		dispatch := func() (more bool) {
			if len(data) == 0 {
				return true
			}
			payload := strings.Join(data, "\n")
			data = data[:0]
			if payload == "[DONE]" {
				return false
			}
			r, err := o.decodeResponse([]byte(payload))
			if err != nil {
				yield("", err)
				return false
			}
			if len(r.Choices) > 0 && r.Choices[0].Delta != nil {
				if c := r.Choices[0].Delta.Content; c != nil && *c != "" {
					return yield(*c, nil)
				}
			}
			return true
		}
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if !dispatch() {
					return
				}
				continue
			}
			field, value, _ := strings.Cut(line, ":")
			if field == "data" { // else a comment (empty field), event, id or retry
				data = append(data, strings.TrimPrefix(value, " "))
			}
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = engine.Errorf(engine.ProviderResponseError, "model stream from %s has a line longer than %d bytes", o.base, maxLine)
			}
			yield("", err)
			return
		}
		if dispatch() {
			yield("", engine.Errorf(engine.ProviderResponseError, "model stream from %s ended without data: [DONE]", o.base))
		}
	}
}

// readBody reads a whole 2xx response body.
func (o *OpenAI) readBody(ctx, reqCtx context.Context, body io.Reader) ([]byte, error) {
	data, err := readLimited(body, maxBody)
	var typed engine.Typed
	if err != nil && !errors.As(err, &typed) {
		err = o.failure(ctx, reqCtx, err, "while reading the response")
	}
	return data, err
}

// readLimited reads at most limit bytes; a longer body is a
// ProviderResponseError.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return data, err
	}
	if int64(len(data)) > limit {
		return data[:limit], engine.Errorf(engine.ProviderResponseError, "model response is larger than %d bytes", limit)
	}
	return data, nil
}

// redact masks the API key in text that came from elsewhere.
func (o *OpenAI) redact(s string) string {
	if o.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, o.cfg.APIKey, "[REDACTED]")
}

// redactURL masks credentials in a URL that may not parse.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + "xxxxx" + raw[i:]
		}
	}
	return raw
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mediaType returns a Content-Type's media type, lower-cased.
func mediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
