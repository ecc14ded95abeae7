package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/tracer"
)

// DefaultMaxRepairs is how many times Plan asks the model to correct an
// invalid program when Planner.MaxRepairs is zero.
const DefaultMaxRepairs = 2

// Emitter receives the planner's trace events; *tracer.Tracer is one. Emit
// may block (a paused debugger) and should return ctx's error when ctx is
// cancelled; any error it returns ends Plan.
type Emitter interface {
	Emit(ctx context.Context, e *tracer.Event) error
}

// Planner asks a language model for a Treelang program that answers a
// question with the given tools, and checks what comes back.
type Planner struct {
	// Transport sends the chat-completions requests.
	Transport engine.ModelTransport
	// Model is the request's "model" field; empty leaves it out, for a
	// transport that fills it in.
	Model string
	// SchemaVersion is the program schema asked for: "1.0" (the default
	// when empty) or "2.0".
	SchemaVersion string
	// MaxRepairs is how many times an invalid reply is sent back for
	// correction: zero means DefaultMaxRepairs, a negative value none.
	MaxRepairs int
	// Validate checks a candidate program (pretty JSON) and explains what
	// is wrong; its error text is shown to the model. Callers pass a
	// check built on engine.ParseProgram. Nil accepts any JSON object.
	Validate func(program []byte) error
	// Tracer, if set, receives a model.request event before each request
	// and a model.response event after it.
	Tracer Emitter
	// OnChunk, if set, makes Plan stream each reply (Transport.Stream)
	// and receive its chunks as they arrive, for a live display. Nil
	// means Transport.Complete.
	OnChunk func(chunk string)
}

// Plan is the outcome of Planner.Plan.
type Plan struct {
	// Program is the validated program, indented JSON with the model's key
	// order and exact numbers. It is nil when planning failed.
	Program []byte
	// Attempts lists every request sent and what came of it, in order.
	Attempts []Attempt
}

// Attempt is one request to the model and its result.
type Attempt struct {
	Request  map[string]any // the chat-completions request, as sent
	Response string         // the model's reply; empty when the request failed
	Err      string         // why the reply was rejected or the request failed; empty on success
}

// version returns the schema version asked for, or an error.
func (p *Planner) version() (string, error) {
	switch p.SchemaVersion {
	case "", "1.0":
		return "1.0", nil
	case "2.0":
		return "2.0", nil
	}
	return "", engine.Errorf(engine.ValueError, "unsupported schema version %q: use 1.0 or 2.0", p.SchemaVersion)
}

func (p *Planner) maxRepairs() int {
	switch {
	case p.MaxRepairs == 0:
		return DefaultMaxRepairs
	case p.MaxRepairs < 0:
		return 0
	}
	return p.MaxRepairs
}

// Request returns the first request Plan sends for question and tools: a
// system message explaining the schema with worked examples and the tools'
// definitions, then the question as the user message, at temperature 0.
// The same inputs always give an equal request. Every value in it is
// decoded JSON (maps, []any, strings, json.Number).
func (p *Planner) Request(question string, tools []*engine.ToolDefinition) (map[string]any, error) {
	version, err := p.version()
	if err != nil {
		return nil, err
	}
	system, err := systemPrompt(version, tools)
	if err != nil {
		return nil, err
	}
	return p.request([]any{message("system", system), message("user", question)}), nil
}

func (p *Planner) request(messages []any) map[string]any {
	req := map[string]any{
		"messages":    messages,
		"temperature": json.Number("0"),
	}
	if p.Model != "" {
		req["model"] = p.Model
	}
	return req
}

func message(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// Plan asks the model for a program answering question with tools and
// returns it once it is a JSON object that Validate accepts. A reply that
// is not, is sent back with the error ("Your program was invalid: ...")
// up to MaxRepairs times; after that Plan fails with a ValueError "the model
// did not produce a valid program after N attempts: ...". A transport
// error, a timeout or cancellation ends Plan at once and is returned
// unchanged. The returned Plan is never nil: on failure it holds the
// attempts made.
func (p *Planner) Plan(ctx context.Context, question string, tools []*engine.ToolDefinition) (*Plan, error) {
	plan := &Plan{}
	if p.Transport == nil {
		return plan, engine.Errorf(engine.ValueError, "the planner has no model transport")
	}
	first, err := p.Request(question, tools)
	if err != nil {
		return plan, err
	}
	messages := first["messages"].([]any)
	attempts := 1 + p.maxRepairs()
	var lastErr error
	for n := 1; n <= attempts; n++ {
		if ctx.Err() != nil {
			return plan, context.Cause(ctx)
		}
		request := p.request(messages)
		if err := p.emit(ctx, &tracer.Event{Kind: tracer.ModelRequest, Arguments: request, Branch: -1, Site: tracer.Site{Attempt: n}}); err != nil {
			return plan, err
		}
		reply, err := p.ask(ctx, request)
		if err != nil {
			plan.Attempts = append(plan.Attempts, Attempt{Request: request, Err: err.Error()})
			_ = p.emit(ctx, &tracer.Event{Kind: tracer.ModelResponse, Branch: -1, Site: tracer.Site{Attempt: n},
				Error: &tracer.ErrorInfo{Type: string(engine.TypeOf(err)), Message: err.Error()}})
			return plan, err
		}
		program, verr := p.check(reply)
		attempt := Attempt{Request: request, Response: reply}
		response := &tracer.Event{Kind: tracer.ModelResponse, Output: reply, HasOutput: true, Branch: -1, Site: tracer.Site{Attempt: n}}
		if verr != nil {
			attempt.Err = verr.Error()
			response.Message = "invalid program: " + verr.Error()
		}
		plan.Attempts = append(plan.Attempts, attempt)
		if err := p.emit(ctx, response); err != nil {
			return plan, err
		}
		if verr == nil {
			plan.Program = program
			return plan, nil
		}
		lastErr = verr
		// Each attempt's request keeps its own messages slice.
		next := make([]any, len(messages), len(messages)+2)
		copy(next, messages)
		messages = append(next, message("assistant", reply), message("user", repairMessage(verr)))
	}
	return plan, &engine.Error{Type: engine.ValueError, Err: lastErr,
		Message: fmt.Sprintf("the model did not produce a valid program after %d attempts: %v", attempts, lastErr)}
}

// ask sends one request and returns the whole reply.
func (p *Planner) ask(ctx context.Context, request map[string]any) (string, error) {
	if p.OnChunk == nil {
		return p.Transport.Complete(ctx, request)
	}
	var reply strings.Builder
	for chunk, err := range p.Transport.Stream(ctx, request) {
		if err != nil {
			return "", err
		}
		reply.WriteString(chunk)
		p.OnChunk(chunk)
	}
	return reply.String(), nil
}

// check extracts the program from a reply, indents it and validates it.
func (p *Planner) check(reply string) ([]byte, error) {
	obj, err := extractObject(reply)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, obj, "", "  "); err != nil {
		return nil, fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	program := pretty.Bytes()
	if p.Validate != nil {
		if err := p.Validate(program); err != nil {
			return nil, err
		}
	}
	return program, nil
}

func (p *Planner) emit(ctx context.Context, e *tracer.Event) error {
	if p.Tracer == nil {
		return nil
	}
	return p.Tracer.Emit(ctx, e)
}
