package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/tracer"
)

// goodProgram is a schema 1.0 program calling the test tool.
const goodProgram = `{"type": "program", "schema_version": "1.0", "mode": "single", "body": [
  {"type": "function", "name": "power", "params": [{"type": "value", "name": "base", "value": 2}, {"type": "value", "name": "exponent", "value": 64}]}]}`

// goodProgramPretty is goodProgram as Plan returns it.
var goodProgramPretty = func() string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(goodProgram), "", "  "); err != nil {
		panic(err)
	}
	return b.String()
}()

// testTools returns the provider's tools; "power" lists exponent after
// base, and the prompt must keep that order.
func testTools(t *testing.T) []*engine.ToolDefinition {
	t.Helper()
	def, err := engine.ParseToolDefinition([]byte(`{"name": "power", "description": "base to the power of exponent",
		"properties": {"base": {"type": "integer"}, "exponent": {"type": "integer"}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	return []*engine.ToolDefinition{def}
}

// scripted answers the nth request with replies[n]; later requests get 500.
func scripted(t *testing.T, replies ...string) *server {
	var mu sync.Mutex
	n := 0
	return newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(replies) {
			http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusInternalServerError)
			return
		}
		completion(w, replies[i])
	})
}

// validateFake stands in for an engine.ParseProgram-based check: the
// program must be a schema 1.0 program and "power" needs both params.
func validateFake(program []byte) error {
	var p struct {
		Type string `json:"type"`
		Body []struct {
			Name   string `json:"name"`
			Params []any  `json:"params"`
		} `json:"body"`
	}
	if err := json.Unmarshal(program, &p); err != nil || p.Type != "program" {
		return errors.New("Failed to parse AST: the root must be a program")
	}
	for _, n := range p.Body {
		if n.Name == "power" && len(n.Params) != 2 {
			return fmt.Errorf("Failed to parse AST: Function 'power' expects 2 positional params (['base', 'exponent']), got %d.", len(n.Params))
		}
	}
	return nil
}

// *tracer.Tracer is what callers pass as Planner.Tracer.
var _ Emitter = (*tracer.Tracer)(nil)

func planner(t *testing.T, s *server) *Planner {
	return &Planner{Transport: s.transport(t), Model: "planner-model", Validate: validateFake}
}

// messages returns the messages of a recorded request as role/content pairs.
func messages(t *testing.T, body map[string]any) [][2]string {
	t.Helper()
	var out [][2]string
	list, _ := body["messages"].([]any)
	for _, m := range list {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		content, _ := mm["content"].(string)
		out = append(out, [2]string{role, content})
	}
	return out
}

func TestPlanValidFirstTime(t *testing.T) {
	s := scripted(t, "Here is the program:\n```json\n"+goodProgram+"\n```\nIt raises 2 to {64}.")
	mem := tracer.NewMemory()
	p := planner(t, s)
	p.Tracer = tracer.New(mem)
	plan, err := p.Plan(context.Background(), "What is 2 to the 64th?", testTools(t))
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if string(plan.Program) != goodProgramPretty {
		t.Errorf("program =\n%s\nwant\n%s", plan.Program, goodProgramPretty)
	}
	if len(plan.Attempts) != 1 || plan.Attempts[0].Err != "" {
		t.Fatalf("attempts = %+v, want one that succeeded", plan.Attempts)
	}

	reqs := s.received()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	body := reqs[0].Body
	if body["model"] != "planner-model" || body["temperature"] != json.Number("0") {
		t.Errorf("model %v temperature %v", body["model"], body["temperature"])
	}
	msgs := messages(t, body)
	if len(msgs) != 2 || msgs[0][0] != "system" || msgs[1] != [2]string{"user", "What is 2 to the 64th?"} {
		t.Fatalf("messages = %q", msgs)
	}
	system := msgs[0][1]
	for _, want := range []string{
		`{"name":"power","description":"base to the power of exponent","properties":{"base":{"type":"integer"},"exponent":{"type":"integer"}}}`,
		"Schema version 1.0", "positional", "value null", "reduce", "Reply with one JSON object only",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}

	got := mem.Events()
	if len(got) != 2 {
		t.Fatalf("emitted %d events, want a request and a response", len(got))
	}
	req, resp := got[0], got[1]
	if req.Kind != tracer.ModelRequest || req.Branch != -1 || !reflect.DeepEqual(req.Arguments, plan.Attempts[0].Request) {
		t.Errorf("request event = %+v", req)
	}
	if resp.Kind != tracer.ModelResponse || resp.Branch != -1 || !resp.HasOutput || resp.Output != plan.Attempts[0].Response || resp.Error != nil {
		t.Errorf("response event = %+v", resp)
	}
}

func TestPlanRepairsInvalidJSON(t *testing.T) {
	broken := `{"type": "program", "body": [`
	s := scripted(t, broken, goodProgram)
	plan, err := planner(t, s).Plan(context.Background(), "q", testTools(t))
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if string(plan.Program) != goodProgramPretty || len(plan.Attempts) != 2 {
		t.Fatalf("program %s after %d attempts", plan.Program, len(plan.Attempts))
	}
	if !strings.Contains(plan.Attempts[0].Err, "not valid JSON") {
		t.Errorf("first attempt's error = %q", plan.Attempts[0].Err)
	}
	msgs := messages(t, s.received()[1].Body)
	if len(msgs) != 4 || msgs[2] != [2]string{"assistant", broken} || msgs[3][0] != "user" ||
		!strings.HasPrefix(msgs[3][1], "Your program was invalid: the reply is not valid JSON") ||
		!strings.HasSuffix(msgs[3][1], "Reply with the corrected JSON only.") {
		t.Fatalf("repair request messages = %q", msgs[2:])
	}
	if first := messages(t, s.received()[0].Body); len(first) != 2 {
		t.Errorf("the first request grew to %d messages", len(first))
	}
}

func TestPlanRepairsInvalidProgram(t *testing.T) {
	oneParam := `{"type": "program", "mode": "single", "body": [{"type": "function", "name": "power", "params": [{"type": "value", "name": "base", "value": 2}]}]}`
	s := scripted(t, oneParam, goodProgram)
	plan, err := planner(t, s).Plan(context.Background(), "q", testTools(t))
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if string(plan.Program) != goodProgramPretty {
		t.Fatalf("program = %s", plan.Program)
	}
	want := "Function 'power' expects 2 positional params (['base', 'exponent']), got 1."
	msgs := messages(t, s.received()[1].Body)
	if len(msgs) != 4 || !strings.Contains(msgs[3][1], want) {
		t.Fatalf("the repair request does not quote the validation error: %q", msgs)
	}
	if !strings.Contains(plan.Attempts[0].Err, want) {
		t.Errorf("attempt error = %q", plan.Attempts[0].Err)
	}
}

func TestPlanGivesUpAfterMaxRepairs(t *testing.T) {
	s := scripted(t, "I cannot do that.", "Still no.", "Never.")
	p := planner(t, s)
	p.MaxRepairs = 1
	plan, err := p.Plan(context.Background(), "q", testTools(t))
	e := assertType(t, err, engine.ValueError)
	if want := "the model did not produce a valid program after 2 attempts: the reply contains no JSON object"; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	if n := len(s.received()); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
	if plan == nil || plan.Program != nil || len(plan.Attempts) != 2 || plan.Attempts[1].Response != "Still no." {
		t.Errorf("plan = %+v", plan)
	}
}

func TestPlanDefaultAndNoRepairs(t *testing.T) {
	for _, c := range []struct{ repairs, requests int }{{0, 1 + DefaultMaxRepairs}, {-1, 1}} {
		s := scripted(t, "no", "no", "no", "no")
		p := planner(t, s)
		p.MaxRepairs = c.repairs
		if _, err := p.Plan(context.Background(), "q", nil); !errors.Is(err, engine.ValueError) {
			t.Fatalf("MaxRepairs %d: %v", c.repairs, err)
		}
		if n := len(s.received()); n != c.requests {
			t.Errorf("MaxRepairs %d: %d requests, want %d", c.repairs, n, c.requests)
		}
	}
}

func TestPlanDoesNotRetryTransportErrors(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError} {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"nope"}}`)
		})
		mem := tracer.NewMemory()
		p := planner(t, s)
		p.Tracer = tracer.New(mem)
		plan, err := p.Plan(context.Background(), "q", testTools(t))
		if !errors.Is(err, engine.ModelTransportError) {
			t.Fatalf("HTTP %d: error %v is not a ModelTransportError", status, err)
		}
		if n := len(s.received()); n != 1 {
			t.Errorf("HTTP %d: server got %d requests, want 1 (no retry)", status, n)
		}
		if len(plan.Attempts) != 1 || plan.Attempts[0].Err != err.Error() {
			t.Errorf("HTTP %d: attempts = %+v", status, plan.Attempts)
		}
		got := mem.Events()
		last := got[len(got)-1]
		if last.Kind != tracer.ModelResponse || last.Error == nil || last.Error.Type != string(engine.TypeOf(err)) || last.HasOutput {
			t.Errorf("HTTP %d: response event = %+v", status, last)
		}
	}
}

func TestPlanCancelledIsNotRetried(t *testing.T) {
	s, arrived, gone := blockingServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := planner(t, s).Plan(ctx, "q", testTools(t))
	if err != context.Canceled {
		t.Fatalf("Plan = %v, want context.Canceled", err)
	}
	waitFor(t, gone, "the server to see the request cancelled")
	if n := len(s.received()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestPlanRequestIsDeterministic(t *testing.T) {
	for _, version := range []string{"", "1.0", "2.0"} {
		p := &Planner{Model: "m", SchemaVersion: version}
		a, err := p.Request("q", testTools(t))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := p.Request("q", testTools(t))
		ea, _ := engine.EncodeValue(a)
		eb, _ := engine.EncodeValue(b)
		if !bytes.Equal(ea, eb) {
			t.Errorf("version %q: two requests differ", version)
		}
		system := messages(t, a)[0][1]
		want := "1.0"
		if version == "2.0" {
			want = "2.0"
		}
		if !strings.Contains(system, "Schema version "+want) || !strings.Contains(system, `"schema_version": "`+want+`"`) {
			t.Errorf("version %q: the prompt does not explain schema %s", version, want)
		}
	}
	req, err := (&Planner{SchemaVersion: "2.0"}).Request("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	v2 := messages(t, req)[0][1]
	if !strings.Contains(v2, "named arguments") || strings.Contains(v2, `"type": "lambda"`) {
		t.Errorf("the 2.0 prompt mixes up the schemas")
	}
}

func TestPlanRejectsBadSetup(t *testing.T) {
	if _, err := (&Planner{}).Plan(context.Background(), "q", nil); !errors.Is(err, engine.ValueError) {
		t.Errorf("no transport: %v", err)
	}
	s := scripted(t)
	p := planner(t, s)
	p.SchemaVersion = "3.0"
	if _, err := p.Plan(context.Background(), "q", nil); !errors.Is(err, engine.ValueError) || !strings.Contains(err.Error(), `"3.0"`) {
		t.Errorf("schema 3.0: %v", err)
	}
	if n := len(s.received()); n != 0 {
		t.Errorf("sent %d requests for a bad setup", n)
	}
}

func TestExtractObject(t *testing.T) {
	cases := []struct{ reply, want, err string }{
		{`{"a": 1}`, `{"a": 1}`, ""},
		{"```json\n{\"a\": {\"b\": 2}}\n```", `{"a": {"b": 2}}`, ""},
		{"Sure! {not json} Here: ```\n{\"a\": \"}{\"}\n``` done", `{"a": "}{"}`, ""},
		{"The program is {\"a\": [1, 2.50, 12345678901234567890]} as asked.", `{"a": [1, 2.50, 12345678901234567890]}`, ""},
		{"```json\n{\"a\": 1\n```", "", "the reply is not valid JSON"},
		{"no braces here", "", "the reply contains no JSON object"},
		{"[1, 2]", "", "the reply contains no JSON object"},
	}
	for _, c := range cases {
		got, err := extractObject(c.reply)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("extractObject(%q) error = %v, want %q", c.reply, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("extractObject(%q) = %s, %v; want %s", c.reply, got, err, c.want)
		}
	}
}

// TestWorkedExamplesParse keeps the prompt's examples valid programs of
// their schema version, with schema 1.0 params matching the example tools.
func TestWorkedExamplesParse(t *testing.T) {
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(exampleTools), &raw); err != nil {
		t.Fatalf("example tools: %v", err)
	}
	params := map[string][]string{}
	for _, r := range raw {
		def, err := engine.ParseToolDefinition(r, "")
		if err != nil {
			t.Fatalf("example tool %s: %v", r, err)
		}
		params[def.Name] = def.PropertyNames()
	}
	for version, examples := range map[string][]example{"1.0": examplesV1, "2.0": examplesV2} {
		for i, ex := range examples {
			prog, err := engine.ParseProgramWith([]byte(ex.Program), engine.ParseOptions{ToolParams: params})
			if err != nil {
				t.Errorf("%s example %d: %v", version, i+1, err)
				continue
			}
			if prog.Version != version {
				t.Errorf("%s example %d is a schema %s program", version, i+1, prog.Version)
			}
		}
	}
}
