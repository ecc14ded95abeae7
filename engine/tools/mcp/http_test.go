package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/treelang/treelang/engine"
)

// tokenEnv is where the HTTP tests read their bearer token, as the CLI
// reads --mcp-http headers from the environment.
const tokenEnv = "TREELANG_TEST_MCP_TOKEN"

// authorized rejects requests without the expected bearer token.
func authorized(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// inProcessHooks observes a test provider running in this process.
func inProcessHooks(tp *testProvider) serverHooks {
	started := make(chan string, 16)
	tp.mu.Lock()
	tp.started = started
	tp.mu.Unlock()
	return serverHooks{
		reset: func() {
			for len(started) > 0 {
				<-started
			}
		},
		waitStarted: func(t *testing.T) {
			select {
			case <-started:
			case <-time.After(hangLimit):
				t.Fatal("the slow call never started on the server")
			}
		},
		cancelled: func(*testing.T) int { return int(tp.cancellations.Load()) },
	}
}

func TestOwnServerHTTP(t *testing.T) {
	t.Setenv(tokenEnv, "s3cret-token")
	token := os.Getenv(tokenEnv)
	tp := newTestProvider()
	hooks := inProcessHooks(tp)
	srv := httptest.NewServer(authorized(token, HTTPHandler(tp)))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	p, err := ConnectHTTP(ctx, srv.URL+"/mcp", http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if v := p.session.InitializeResult().ProtocolVersion; v < statelessProtocol {
		t.Fatalf("negotiated %s, want the stateless protocol %s or later", v, statelessProtocol)
	}
	checkOwnServer(t, p, hooks)
}

func TestConnectHTTPFailures(t *testing.T) {
	t.Setenv(tokenEnv, "s3cret-token")
	token := os.Getenv(tokenEnv)
	srv := httptest.NewServer(authorized(token, HTTPHandler(newTestProvider())))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()

	t.Run("wrong token", func(t *testing.T) {
		_, err := ConnectHTTP(ctx, srv.URL+"/mcp", http.Header{"Authorization": {"Bearer wrong-" + token}})
		e := errorOfType(t, err, engine.ProviderResponseError)
		if strings.Contains(e.Message, token) {
			t.Fatalf("message %q shows the token", e.Message)
		}
		if !strings.Contains(e.Message, "Unauthorized") {
			t.Fatalf("message %q does not say the server refused", e.Message)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		url := closed.URL + "/mcp?api_key=" + token
		closed.Close()
		_, err := ConnectHTTP(ctx, url, http.Header{"Authorization": {"Bearer " + token}})
		e := errorOfType(t, err, engine.ProviderResponseError)
		if strings.Contains(e.Message, token) {
			t.Fatalf("message %q shows the secret", e.Message)
		}
		if !strings.Contains(e.Message, strings.TrimPrefix(closed.URL, "http://")) {
			t.Fatalf("message %q does not name the server", e.Message)
		}
	})
	t.Run("bad URL", func(t *testing.T) {
		_, err := ConnectHTTP(ctx, "localhost:1234", nil)
		errorOfType(t, err, engine.ValueError)
	})
}

// The server keeps listing failures visible and retries on the next request.
func TestHTTPHandlerProviderFailure(t *testing.T) {
	srv := httptest.NewServer(HTTPHandler(brokenProvider{}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	_, err := ConnectHTTP(ctx, srv.URL, nil)
	e := errorOfType(t, err, engine.ProviderResponseError)
	if !strings.Contains(e.Message, "Service Unavailable") {
		t.Fatalf("message %q", e.Message)
	}
}

type brokenProvider struct{}

func (brokenProvider) ListTools(context.Context) ([]*engine.ToolDefinition, error) {
	return nil, engine.Errorf(engine.ProviderResponseError, "toolbox unreadable")
}

func (brokenProvider) Tool(_ context.Context, name string) (*engine.ToolDefinition, error) {
	return nil, engine.NotFound(name)
}

func (brokenProvider) CallTool(context.Context, *engine.Call) (any, error) {
	return nil, engine.Errorf(engine.ProviderResponseError, "toolbox unreadable")
}

func TestServeHTTP(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":8080x", "example.com:80", "10.0.0.1:0"} {
		err := ServeHTTP(context.Background(), newTestProvider(), addr, nil)
		if engine.TypeOf(err) != engine.ValueError {
			t.Errorf("ServeHTTP(%q) = %v, want a ValueError", addr, err)
		}
	}
	tp := newTestProvider()
	hooks := inProcessHooks(tp)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrc := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- ServeHTTP(ctx, tp, ":0", func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-served:
		t.Fatal(err)
	}
	if ip := addr.(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Fatalf("listening on %v", addr)
	}
	cctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	p, err := ConnectHTTP(cctx, "http://"+addr.String()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := mustCall(t, p, "echo", map[string]any{"text": "over TCP"}); got != "over TCP" {
		t.Fatalf("echo = %#v", got)
	}
	// Stopping the server cancels a call in flight on it.
	done := make(chan error, 1)
	go func() {
		_, err := p.CallTool(cctx, &engine.Call{Tool: "slow", Arguments: map[string]any{}})
		done <- err
	}()
	hooks.waitStarted(t)
	stop()
	if err := <-served; err != nil {
		t.Fatalf("ServeHTTP returned %v after cancellation", err)
	}
	waitFor(t, "the slow call to be cancelled on the server", func() bool { return hooks.cancelled(t) > 0 })
	if err := <-done; err == nil {
		t.Fatal("the call in flight succeeded after the server stopped")
	}
}

// Clients on protocols before 2026-07-28 get sessions, with responses as
// event streams or, from some servers, plain JSON; property order, exact
// numbers and cancellation work the same.
func TestHTTPSessions(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprint("JSONResponse=", jsonResponse), func(t *testing.T) {
			tp := newTestProvider()
			hooks := inProcessHooks(tp)
			hooks.lossyCancel = true
			server, err := NewServer(context.Background(), tp)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
				&sdk.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
			defer cancel()
			p, err := ConnectHTTP(ctx, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if v := p.session.InitializeResult().ProtocolVersion; v >= statelessProtocol {
				t.Fatalf("negotiated %s, want an older protocol", v)
			}
			checkOwnServer(t, p, hooks)
		})
	}
}
