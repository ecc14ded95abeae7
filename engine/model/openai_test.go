package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/treelang/treelang/engine"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testKey is the fake API key the test servers expect. It must never show
// up in an error message.
const testKey = "sk-test-0123456789abcdef"

// hangGuard bounds waits that only a bug would make long; it is not a
// timing assertion.
const hangGuard = 10 * time.Second

// request is what a test server received.
type request struct {
	Path          string
	Authorization string
	Accept        string
	Body          map[string]any
}

// server is an OpenAI-compatible test server on loopback that records
// every request and answers with handle.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body map[string]any)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		v, err := engine.DecodeValue(data)
		body, _ := v.(map[string]any)
		if err != nil || body == nil || r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Accept: r.Header.Get("Accept"), Body: body})
		s.mu.Unlock()
		handle(w, r, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) received() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.requests...)
}

// transport returns an OpenAI transport for s with the test key.
func (s *server) transport(t *testing.T, edit ...func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{BaseURL: s.URL + "/v1", APIKey: testKey, Model: "test-model", HTTPClient: s.Client()}
	for _, e := range edit {
		e(&cfg)
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return o
}

// completion writes a chat-completion body whose message content is text.
func completion(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "application/json")
	data, _ := json.Marshal(map[string]any{
		"id":      "chatcmpl-1",
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	w.Write(data)
}

// delta is one stream event carrying content.
func delta(content string) string {
	data, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}}}})
	return "data: " + string(data) + "\n\n"
}

// writeFlushed writes each piece and flushes it, so the client reads them
// separately.
func writeFlushed(w http.ResponseWriter, pieces ...string) {
	for _, p := range pieces {
		io.WriteString(w, p)
		w.(http.Flusher).Flush()
	}
}

func collect(seq func(func(string, error) bool)) ([]string, error) {
	var chunks []string
	for c, err := range seq {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

// assertType checks that err is an *engine.Error of type want and that the
// key is not in its message.
func assertType(t *testing.T, err error, want engine.ErrorType) *engine.Error {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *engine.Error", err, err)
	}
	if e.Type != want {
		t.Fatalf("error type = %s, want %s (message %q)", e.Type, want, e.Message)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatalf("error message contains the API key: %q", err.Error())
	}
	return e
}

func TestCompleteSendsRequestAndReturnsContent(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		completion(w, "the answer")
	})
	o := s.transport(t)
	req := map[string]any{
		"messages":    []any{map[string]any{"role": "user", "content": "hi"}},
		"temperature": json.Number("0"),
		"seed":        json.Number("123456789012345678901"),
		"stream":      true,
	}
	before, _ := engine.EncodeValue(req)
	got, err := o.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got != "the answer" {
		t.Fatalf("Complete = %q, want %q", got, "the answer")
	}
	after, _ := engine.EncodeValue(req)
	if !bytes.Equal(before, after) {
		t.Errorf("Complete modified the caller's request: %s", after)
	}
	reqs := s.received()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Authorization != "Bearer "+testKey {
		t.Errorf("Authorization = %q", r.Authorization)
	}
	if r.Body["model"] != "test-model" {
		t.Errorf("model = %v, want the configured test-model", r.Body["model"])
	}
	if _, ok := r.Body["stream"]; ok {
		t.Errorf("Complete sent a stream field: %v", r.Body["stream"])
	}
	if r.Body["seed"] != json.Number("123456789012345678901") || r.Body["temperature"] != json.Number("0") {
		t.Errorf("numbers changed on the way: seed %v temperature %v", r.Body["seed"], r.Body["temperature"])
	}
}

func TestRequestModelWinsOverConfig(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) { completion(w, "ok") })
	o := s.transport(t)
	if _, err := o.Complete(context.Background(), map[string]any{"model": "other", "messages": []any{}}); err != nil {
		t.Fatal(err)
	}
	if got := s.received()[0].Body["model"]; got != "other" {
		t.Errorf("model = %v, want the request's own", got)
	}
}

func TestStreamYieldsChunks(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeFlushed(w,
			": keep-alive comment\n\n",
			`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"Hel`, // split inside a line
			`"}}]}`+"\n\n",
			"event: message\r\nid: 7\r\n"+strings.ReplaceAll(delta("lo"), "\n", "\r\n"),
			delta(""),
			delta(" wor"),
			delta("ld"),
			`data: {"choices":[],"usage":{"total_tokens":3}}`+"\n\n",
			"data: [DONE]\n\n",
		)
	})
	o := s.transport(t)
	chunks, err := collect(o.Stream(context.Background(), map[string]any{"messages": []any{}}))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []string{"Hel", "lo", " wor", "ld"}
	if !reflect.DeepEqual(chunks, want) {
		t.Fatalf("chunks = %q, want %q", chunks, want)
	}
	r := s.received()[0]
	if r.Body["stream"] != true || r.Accept != "text/event-stream" {
		t.Errorf("stream request: stream=%v Accept=%q", r.Body["stream"], r.Accept)
	}
}

func TestStreamSendsNothingUntilIterated(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		writeFlushed(w, delta("x"), "data: [DONE]\n\n")
	})
	seq := s.transport(t).Stream(context.Background(), map[string]any{})
	if n := len(s.received()); n != 0 {
		t.Fatalf("Stream sent %d requests before iteration", n)
	}
	if chunks, err := collect(seq); err != nil || len(chunks) != 1 {
		t.Fatalf("chunks %q, err %v", chunks, err)
	}
}

func TestStreamErrors(t *testing.T) {
	cases := []struct {
		name   string
		events []string
		want   engine.ErrorType
		text   string
		chunks int
	}{
		{"error event", []string{delta("a"), `data: {"error":{"message":"the engine is overloaded"}}` + "\n\n"}, engine.ModelTransportError, "the engine is overloaded", 1},
		{"no DONE", []string{delta("a"), delta("b")}, engine.ProviderResponseError, "ended without data: [DONE]", 2},
		{"not JSON", []string{"data: {oops\n\n"}, engine.ProviderResponseError, "not a chat completion", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
				w.Header().Set("Content-Type", "text/event-stream")
				writeFlushed(w, c.events...)
			})
			chunks, err := collect(s.transport(t).Stream(context.Background(), map[string]any{}))
			assertType(t, err, c.want)
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q does not mention %q", err, c.text)
			}
			if len(chunks) != c.chunks {
				t.Errorf("got %d chunks before the error, want %d", len(chunks), c.chunks)
			}
		})
	}
}

func TestStreamAcceptsPlainCompletion(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) { completion(w, "whole") })
	chunks, err := collect(s.transport(t).Stream(context.Background(), map[string]any{}))
	if err != nil || !reflect.DeepEqual(chunks, []string{"whole"}) {
		t.Fatalf("chunks %q, err %v", chunks, err)
	}
}

func TestStreamBreakCancelsRequest(t *testing.T) {
	gone := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeFlushed(w, delta("first"))
		<-r.Context().Done()
		close(gone)
	})
	for chunk, err := range s.transport(t).Stream(context.Background(), map[string]any{}) {
		if err != nil || chunk != "first" {
			t.Fatalf("chunk %q, err %v", chunk, err)
		}
		break
	}
	select {
	case <-gone:
	case <-time.After(hangGuard):
		t.Fatal("the server never saw the request end after the consumer stopped")
	}
}

func TestNewOpenAIWithoutKey(t *testing.T) {
	for _, base := range []string{"", "https://api.example.com/v1"} {
		_, err := NewOpenAI(OpenAIConfig{BaseURL: base})
		e := assertType(t, err, engine.ModelAuthError)
		if e.Message != "OPENAI_API_KEY is not set; pass --api-key or set the environment variable" {
			t.Errorf("message = %q", e.Message)
		}
		if !errors.Is(err, engine.ProviderResponseError) {
			t.Errorf("a missing key is not a provider error")
		}
	}
}

func TestLoopbackNeedsNoKey(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) { completion(w, "local") })
	o := s.transport(t, func(c *OpenAIConfig) { c.APIKey = "" })
	if got, err := o.Complete(context.Background(), map[string]any{}); err != nil || got != "local" {
		t.Fatalf("Complete = %q, %v", got, err)
	}
	if a := s.received()[0].Authorization; a != "" {
		t.Errorf("sent Authorization %q without a key", a)
	}

	locked := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		http.Error(w, `{"error":{"message":"missing bearer token"}}`, http.StatusUnauthorized)
	})
	_, err := locked.transport(t, func(c *OpenAIConfig) { c.APIKey = "" }).Complete(context.Background(), map[string]any{})
	assertType(t, err, engine.ModelAuthError)
	if !strings.Contains(err.Error(), "wants an API key") || !strings.Contains(err.Error(), "pass --api-key or set OPENAI_API_KEY") {
		t.Errorf("a local server that wants a key: %q", err)
	}
}

func TestNewOpenAIRejectsBadConfig(t *testing.T) {
	for _, cfg := range []OpenAIConfig{
		{BaseURL: "ftp://example.com", APIKey: "k"},
		{BaseURL: "127.0.0.1:8080/v1", APIKey: "k"},
		{BaseURL: "http://127.0.0.1/v1", Timeout: -time.Second},
	} {
		if _, err := NewOpenAI(cfg); !errors.Is(err, engine.ValueError) {
			t.Errorf("NewOpenAI(%+v) = %v, want a ValueError", cfg, err)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(EnvBaseURL, "http://127.0.0.1:9/v1")
	t.Setenv(EnvAPIKey, "env-key")
	got := ConfigFromEnv(OpenAIConfig{Model: "m"})
	if got.BaseURL != "http://127.0.0.1:9/v1" || got.APIKey != "env-key" || got.Model != "m" {
		t.Errorf("from the environment: %+v", got)
	}
	got = ConfigFromEnv(OpenAIConfig{BaseURL: "http://localhost:1/v1", APIKey: "flag-key"})
	if got.BaseURL != "http://localhost:1/v1" || got.APIKey != "flag-key" {
		t.Errorf("flags did not win: %+v", got)
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		want    engine.ErrorType
		mention []string
		retry   time.Duration
	}{
		{"unauthorized", 401, nil, `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error"}}`,
			engine.ModelAuthError, []string{"401", "Incorrect API key provided: [REDACTED]"}, 0},
		{"forbidden", 403, nil, `{"error":"not allowed"}`, engine.ModelAuthError, []string{"403", "not allowed"}, 0},
		{"rate limited", 429, map[string]string{"Retry-After": "7"}, `{"error":{"message":"Rate limit reached"}}`,
			engine.ModelRateLimitError, []string{"429", "retry after 7s", "Rate limit reached"}, 7 * time.Second},
		{"server error", 500, nil, `{"error":{"message":"the engine is overloaded"}}`,
			engine.ModelTransportError, []string{"HTTP 500", "the engine is overloaded"}, 0},
		{"not found", 404, nil, "no such route\n", engine.ModelTransportError, []string{"HTTP 404", "no such route"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			o := s.transport(t)
			_, err := o.Complete(context.Background(), map[string]any{})
			assertType(t, err, c.want)
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != c.status || se.RetryAfter != c.retry {
				t.Errorf("status details = %+v, want status %d retry %s", se, c.status, c.retry)
			}
			if !errors.Is(err, engine.ModelTransportError) || !errors.Is(err, engine.ProviderResponseError) {
				t.Errorf("%v is not a ModelTransportError and ProviderResponseError", err)
			}
			// The stream reports the same failure when iterated.
			_, serr := collect(o.Stream(context.Background(), map[string]any{}))
			assertType(t, serr, c.want)
		})
	}
}

func TestMalformedCompletion(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":   "<html>gateway</html>",
		"no choices": `{"choices":[]}`,
		"no content": `{"choices":[{"message":{"role":"assistant","content":null}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) { io.WriteString(w, body) })
			_, err := s.transport(t).Complete(context.Background(), map[string]any{})
			assertType(t, err, engine.ProviderResponseError)
		})
	}
}

// blockingServer never answers; it reports when a request arrives and
// when the client has gone away.
func blockingServer(t *testing.T) (s *server, arrived, gone chan struct{}) {
	arrived, gone = make(chan struct{}, 1), make(chan struct{}, 1)
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default: // nobody is waiting for this one
		}
	}
	s = newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		signal(arrived)
		<-r.Context().Done()
		signal(gone)
	})
	return s, arrived, gone
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("timed out waiting: %s", what)
	}
}

func TestTimeout(t *testing.T) {
	s, _, gone := blockingServer(t)
	o := s.transport(t, func(c *OpenAIConfig) { c.Timeout = 50 * time.Millisecond })
	_, err := o.Complete(context.Background(), map[string]any{})
	assertType(t, err, engine.ModelTimeoutError)
	for _, target := range []error{engine.TimeoutError, engine.ProviderResponseError, context.DeadlineExceeded} {
		if !errors.Is(err, target) {
			t.Errorf("%v is not a %v", err, target)
		}
	}
	if !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("message %q does not say how long it waited", err)
	}
	waitFor(t, gone, "the server to see the request cancelled")

	_, err = collect(o.Stream(context.Background(), map[string]any{}))
	assertType(t, err, engine.ModelTimeoutError)
	waitFor(t, gone, "the server to see the stream cancelled")
}

func TestCallerDeadlineIsModelTimeout(t *testing.T) {
	s, _, gone := blockingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.transport(t).Complete(ctx, map[string]any{})
	assertType(t, err, engine.ModelTimeoutError)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not wrap the deadline", err)
	}
	waitFor(t, gone, "the server to see the request cancelled")
}

func TestCancellation(t *testing.T) {
	s, arrived, gone := blockingServer(t)
	o := s.transport(t)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := o.Complete(ctx, map[string]any{})
	if err != context.Canceled {
		t.Fatalf("Complete after cancel = %v (%T), want context.Canceled itself", err, err)
	}
	waitFor(t, gone, "the server to see the request cancelled")

	cause := errors.New("user pressed ctrl-c")
	ctx, cancelCause := context.WithCancelCause(context.Background())
	go func() { <-arrived; cancelCause(cause) }()
	_, err = collect(o.Stream(ctx, map[string]any{}))
	if err != cause {
		t.Fatalf("Stream after cancel = %v, want the cancel cause", err)
	}
	waitFor(t, gone, "the server to see the stream cancelled")
}

func TestCancellationMidStream(t *testing.T) {
	gone := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeFlushed(w, delta("one"))
		<-r.Context().Done()
		close(gone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var chunks []string
	var err error
	for c, e := range s.transport(t).Stream(ctx, map[string]any{}) {
		if e != nil {
			err = e
			break
		}
		chunks = append(chunks, c)
		cancel()
	}
	if !reflect.DeepEqual(chunks, []string{"one"}) || err != context.Canceled {
		t.Fatalf("chunks %q, err %v; want [one] then context.Canceled", chunks, err)
	}
	waitFor(t, gone, "the server to see the stream cancelled")
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: "http://" + addr + "/v1/", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Complete(context.Background(), map[string]any{})
	e := assertType(t, err, engine.ModelConnectionError)
	if want := "cannot reach http://" + addr + "/v1: connection refused"; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	if !errors.Is(err, engine.ConnectionError) || !errors.Is(err, engine.ProviderResponseError) {
		t.Errorf("%v is not a ConnectionError and ProviderResponseError", err)
	}
	_, err = collect(o.Stream(context.Background(), map[string]any{}))
	assertType(t, err, engine.ModelConnectionError)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"7":                             7 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-3":                            0,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:04:35 GMT": 30 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestEndpointKeepsQueryAndHidesCredentials(t *testing.T) {
	o, err := NewOpenAI(OpenAIConfig{BaseURL: "http://user:hunter2@127.0.0.1:9/v1/?api-version=1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.Endpoint(), "http://user:xxxxx@127.0.0.1:9/v1/chat/completions?api-version=1"; got != want {
		t.Errorf("Endpoint = %q, want %q", got, want)
	}
}
