// Command treelang runs Treelang programs and debugs them: a Go port of
// the Python library's execution engine and CLI, plus an interactive
// terminal debugger, record/replay fixtures and redaction.
//
// main.go only parses flags, wires the packages together and maps errors
// to exit statuses (upstream's): 0 ok, 2 input, 3 execution, 4 provider.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/model"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/engine/tools/mcp"
	"github.com/treelang/treelang/fixtures"
	"github.com/treelang/treelang/replay"
	"github.com/treelang/treelang/tracer"
	"github.com/treelang/treelang/tui"
	"github.com/treelang/treelang/tui/demo"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A run allocates small argument maps at a high rate over a small
		// live heap; collecting less often makes long maps markedly faster
		// while memory stays proportional to the program and its result.
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses, as upstream.
const (
	exitOK        = 0
	exitCheck     = 1 // redact --check found secrets
	exitInput     = 2
	exitExecution = 3
	exitProvider  = 4
	exitCancelled = 130
)

const usage = `treelang: run and debug Treelang programs

  treelang demo                                  the debugger on the embedded demo
  treelang execute PROGRAM [flags]               run headless (--record, --trace, --replay)
  treelang replay PROGRAM --fixture FIXTURE      replay offline; fails on drift or unused entries
  treelang replay --fixture FIXTURE              replay a recorded ask, planning included
  treelang debug PROGRAM [flags]                 the debugger on a live or replayed run
  treelang trace FILE [--output text]            a saved trace, in the debugger or as text
  treelang validate PROGRAM | inspect PROGRAM [--format tree|json] | schema [--schema-version V]
  treelang generate "QUESTION" [flags]           ask a model for a program and print it
  treelang ask "QUESTION" [flags]                generate, then execute
  treelang redact FIXTURE [--rules FILE] [-o OUT] [--check]
  treelang tools serve [--tools FILE] [--http ADDR]
  treelang tools list [--tools FILE | --mcp-stdio "CMD ARGS" | --mcp-http URL]   parameters and MCP hints

PROGRAM may be - for standard input. Tools: --tools FILE | --mcp-stdio "CMD ARGS" | --mcp-http URL.
Policy: --policy FILE, --max-nodes --max-depth --max-call-depth --max-tool-calls --max-concurrency --timeout.
Run "treelang COMMAND -h" for a command's flags.
`

// cli carries the streams of one invocation.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	json           bool
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInput
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "execute":
		return c.execute(ctx, rest, false)
	case "replay":
		return c.execute(ctx, rest, true)
	case "validate":
		return c.validate(rest, "json", "validate")
	case "inspect":
		return c.validate(rest, "", "inspect")
	case "schema":
		return c.schema(rest)
	case "trace":
		return c.trace(ctx, rest)
	case "redact":
		return c.redact(rest)
	case "tools":
		return c.tools(ctx, rest)
	case "generate":
		return c.ask(ctx, rest, false)
	case "ask":
		return c.ask(ctx, rest, true)
	case "debug":
		return c.debug(ctx, rest)
	case "demo":
		return c.demo(ctx, rest)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "treelang: unknown command %q\n\n%s", cmd, usage)
	return exitInput
}

// parse parses flags that may come before or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("treelang "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// ---- errors and exit statuses ----

// inputError marks an error as the user's input (exit 2).
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// ErrorType is the wrapped error's type, or ValueError (OSError for files
// that cannot be read or written), as upstream reports input errors.
func (e *inputError) ErrorType() engine.ErrorType {
	var typed engine.Typed
	if errors.As(e.err, &typed) {
		return typed.ErrorType()
	}
	var pathErr *fs.PathError
	if errors.As(e.err, &pathErr) {
		return "OSError"
	}
	return engine.ValueError
}

// providerError marks an error as a tool server or model endpoint
// problem (exit 4).
type providerError struct{ err error }

func (e *providerError) Error() string { return e.err.Error() }
func (e *providerError) Unwrap() error { return e.err }

func inputf(format string, args ...any) error { return &inputError{fmt.Errorf(format, args...)} }

// classify maps an error to its category and exit status, in upstream's
// priority order.
func classify(err error) (string, int) {
	var in *inputError
	var pe *providerError
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled", exitCancelled
	case errors.As(err, &in):
		return "input", exitInput
	case errors.Is(err, engine.ReplayMismatchError):
		return "execution", exitExecution
	case errors.As(err, &pe), errors.Is(err, engine.ProviderResponseError):
		return "provider", exitProvider
	case errors.Is(err, engine.TreelangError), errors.Is(err, engine.TimeoutError), errors.Is(err, engine.TypeError):
		return "execution", exitExecution
	case errors.Is(err, engine.ValueError):
		return "input", exitInput
	}
	var se *engine.SyntaxError
	if errors.As(err, &se) {
		return "input", exitInput
	}
	return "execution", exitExecution
}

// fail reports err in the chosen output mode and returns its exit status.
func (c *cli) fail(err error, extra map[string]any) int {
	cat, code := classify(err)
	typ := string(engine.TypeOf(err))
	if typ == "" {
		typ = "CancelledError"
	}
	if c.json {
		e := map[string]any{"category": cat, "type": typ, "message": err.Error()}
		if p := engine.PathOf(err); p != "" {
			e["path"] = p
		}
		var m *replay.MismatchError
		if errors.As(err, &m) {
			e["report"] = m.Report()
		}
		for k, v := range extra {
			e[k] = v
		}
		c.writeJSON(map[string]any{"ok": false, "error": e})
		return code
	}
	var m *replay.MismatchError
	if errors.As(err, &m) {
		fmt.Fprint(c.stderr, m.SideBySide())
	}
	loc := ""
	if p := engine.PathOf(err); p != "" && !strings.Contains(err.Error(), p) {
		loc = " (at " + p + ")"
	}
	fmt.Fprintf(c.stderr, "treelang: %s error: %s: %s%s\n", cat, typ, err.Error(), loc)
	return code
}

func (c *cli) writeJSON(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(c.stderr, "treelang: cannot encode output: %v\n", err)
		return
	}
	c.stdout.Write(buf.Bytes())
}

// ---- reading inputs ----

func (c *cli) readInput(name string) ([]byte, error) {
	if name == "-" {
		data, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, inputf("cannot read standard input: %v", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, inputf("cannot read %s: %v", name, errors.Unwrap(err))
	}
	return data, nil
}

func (c *cli) loadProgram(name string) (*engine.Program, []byte, error) {
	data, err := c.readInput(name)
	if err != nil {
		return nil, nil, err
	}
	prog, err := engine.ParseProgram(data)
	if err != nil {
		src := name
		if src == "-" {
			src = "<stdin>"
		}
		return nil, nil, &inputError{fmt.Errorf("%s: %w", src, err)}
	}
	return prog, data, nil
}

// ---- shared run flags ----

type runFlags struct {
	tools, mcpStdio, mcpHTTP string
	trustHints               bool
	policy                   string
	limits                   map[string]*string
	output, trace, record    string
	replayFixture            string
	noRedact                 bool
	rules                    string
	stall                    time.Duration
}

func addRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{limits: map[string]*string{}}
	fs.StringVar(&f.tools, "tools", "", "scripted or builtin toolbox `FILE` (JSON)")
	fs.StringVar(&f.mcpStdio, "mcp-stdio", "", "MCP server command `\"CMD ARGS\"` run over stdio (no shell)")
	fs.StringVar(&f.mcpHTTP, "mcp-http", "", "MCP server `URL` (streamable HTTP); TREELANG_MCP_AUTHORIZATION sets the Authorization header")
	fs.BoolVar(&f.trustHints, "trust-idempotent-hints", false, "treat MCP tools with idempotentHint as idempotent for retries")
	fs.StringVar(&f.policy, "policy", "", "execution policy `FILE` (JSON: retry, parallel_failures, limits)")
	for _, name := range []string{"max-nodes", "max-depth", "max-call-depth", "max-tool-calls", "max-concurrency"} {
		f.limits[name] = fs.String(name, "", "limit: "+strings.ReplaceAll(name, "-", " ")+" (positive integer)")
	}
	f.limits["timeout"] = fs.String("timeout", "", "wall-clock limit of the run in `seconds`")
	fs.StringVar(&f.output, "output", "text", "output format: text or json")
	fs.StringVar(&f.trace, "trace", "", "write the run's events to `FILE` (JSON Lines)")
	fs.StringVar(&f.record, "record", "", "record every tool attempt into fixture `FILE`")
	fs.StringVar(&f.replayFixture, "replay", "", "serve tool calls from fixture `FILE` instead of live tools")
	fs.BoolVar(&f.noRedact, "no-redact", false, "do not redact secrets from traces and recorded fixtures")
	fs.StringVar(&f.rules, "rules", "", "redaction rules `FILE` for --record")
	fs.DurationVar(&f.stall, "stall", 2*time.Second, "replay: report a drift when nothing progresses for this long")
	return f
}

// policy builds the policy and limits from --policy and the limit flags.
func (f *runFlags) policyAndLimits(c *cli) (engine.Policy, engine.Limits, error) {
	var pol engine.Policy
	var lim engine.Limits
	if f.policy != "" {
		data, err := c.readInput(f.policy)
		if err != nil {
			return pol, lim, err
		}
		pol, lim, err = engine.ParsePolicy(data)
		if err != nil {
			return pol, lim, &inputError{fmt.Errorf("%s: %w", f.policy, err)}
		}
	}
	for name, v := range f.limits {
		if *v == "" {
			continue
		}
		key := map[string]string{"timeout": "timeout_seconds"}[name]
		if key == "" {
			key = strings.ReplaceAll(name, "-", "_")
		}
		if err := lim.SetLimitFlag(key, *v); err != nil {
			return pol, lim, &inputError{fmt.Errorf("--%s: %w", name, err)}
		}
	}
	return pol, lim, nil
}

// provider builds the live tool provider named by the flags.
func (f *runFlags) provider(ctx context.Context, c *cli, pol *engine.Policy) (engine.ToolProvider, func(), error) {
	n := 0
	for _, s := range []string{f.tools, f.mcpStdio, f.mcpHTTP} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return nil, nil, inputf("use only one of --tools, --mcp-stdio and --mcp-http")
	}
	switch {
	case f.tools != "":
		tb, err := tools.Load(f.tools)
		if err != nil {
			return nil, nil, &inputError{err}
		}
		return tb, func() {}, nil
	case f.mcpStdio != "":
		argv, err := mcp.ParseCommand(f.mcpStdio)
		if err != nil {
			return nil, nil, &inputError{fmt.Errorf("--mcp-stdio: %w", err)}
		}
		p, err := mcp.ConnectStdio(ctx, argv[0], argv[1:], nil)
		if err != nil {
			return nil, nil, &providerError{err}
		}
		f.applyHints(ctx, c, p, pol)
		return p, func() { p.Close() }, nil
	case f.mcpHTTP != "":
		h := http.Header{}
		if v := os.Getenv("TREELANG_MCP_AUTHORIZATION"); v != "" {
			h.Set("Authorization", v)
		}
		p, err := mcp.ConnectHTTP(ctx, f.mcpHTTP, h)
		if err != nil {
			return nil, nil, &providerError{err}
		}
		f.applyHints(ctx, c, p, pol)
		return p, func() { p.Close() }, nil
	}
	return tools.NoTools(), func() {}, nil
}

func (f *runFlags) applyHints(ctx context.Context, c *cli, p *mcp.Provider, pol *engine.Policy) {
	defs, err := p.ListTools(ctx)
	if err != nil {
		return
	}
	if f.trustHints {
		pol.Retry.IdempotentTools = append(pol.Retry.IdempotentTools, mcp.IdempotentByHint(defs)...)
	}
	for _, w := range p.Warnings() {
		fmt.Fprintln(c.stderr, "treelang: warning:", w)
	}
}

// session is one prepared run: provider, options and the files that must
// be written whatever happens.
type session struct {
	prog     *engine.Program
	source   []byte
	provider engine.ToolProvider
	opts     engine.Options
	replay   *replay.ToolReplay
	recorder *replay.Recorder
	traceOut *tracer.JSONLWriter
	tracer   *tracer.Tracer
	closers  []func()
}

func (s *session) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// prepare wires provider, replay, recorder and trace for one run. t, when
// not nil, is the debugger's tracer: the trace file is added to it and a
// replay becomes interactive (a drift waits for the user).
func (f *runFlags) prepare(ctx context.Context, c *cli, prog *engine.Program, source []byte, t *tracer.Tracer) (*session, error) {
	pol, lim, err := f.policyAndLimits(c)
	if err != nil {
		return nil, err
	}
	if f.record != "" && f.rules != "" && !f.noRedact {
		// A bad rules file must stop the run before any tool is called.
		if _, err := fixtures.LoadRules(f.rules); err != nil {
			return nil, &inputError{err}
		}
	}
	s := &session{prog: prog, source: source, tracer: t}
	if f.trace != "" {
		w, err := f.openTrace()
		if err != nil {
			return nil, err
		}
		s.traceOut = w
		if s.tracer == nil {
			s.tracer = tracer.New(w)
		} else {
			s.tracer.AddSink(w)
		}
	}
	if s.tracer != nil {
		s.opts.Tracer = s.tracer
	}
	if f.replayFixture != "" {
		fx, err := fixtures.Load(f.replayFixture)
		if err != nil {
			return nil, &inputError{err}
		}
		for _, w := range fx.CheckStamps(source, fx.Tools) {
			fmt.Fprintln(c.stderr, "treelang: warning:", w)
		}
		ropts := replay.Options{Stall: f.stall, Interactive: t != nil}
		if s.tracer != nil {
			ropts.Tracer = s.tracer
		}
		if t != nil && (f.tools != "" || f.mcpStdio != "" || f.mcpHTTP != "") {
			// The debugger re-records an accepted drifting call live.
			live, closeFn, err := f.provider(ctx, c, &pol)
			if err != nil {
				return nil, err
			}
			ropts.Live = live
			s.closers = append(s.closers, closeFn)
		}
		rp, err := replay.NewToolReplay(fx, ropts)
		if err != nil {
			return nil, &inputError{err}
		}
		s.replay, s.provider = rp, rp
		s.opts.Clock = rp.Clock()
	} else {
		p, closeFn, err := f.provider(ctx, c, &pol)
		if err != nil {
			return nil, err
		}
		s.provider = p
		s.closers = append(s.closers, closeFn)
	}
	if f.record != "" {
		s.recorder = replay.NewRecorder(s.provider)
		s.provider = s.recorder
		s.opts.Clock = s.recorder.Clock(s.opts.Clock)
	}
	s.opts.Policy, s.opts.Limits = pol, lim
	return s, nil
}

// openTrace creates the --trace file, redacted unless --no-redact.
func (f *runFlags) openTrace() (*tracer.JSONLWriter, error) {
	w, err := tracer.CreateJSONL(f.trace)
	if err != nil {
		return nil, inputf("cannot create trace %s: %v", f.trace, err)
	}
	if !f.noRedact {
		rules := fixtures.DefaultTraceRules()
		w.SetTransform(func(e *tracer.Event) *tracer.Event { return redactEvent(e, rules) })
	}
	// Every line reaches the file as it happens, so a run stuck in a
	// tool (then killed) still shows the attempt it was waiting on.
	w.SetFlushEveryEvent(true)
	return w, nil
}

// redactEvent applies the trace redaction rules to a copy of e.
func redactEvent(e *tracer.Event, rules fixtures.Rules) *tracer.Event {
	cp := e.Clone()
	if cp.Arguments != nil {
		cp.Arguments = fixtures.RedactAny(cp.Arguments, rules)
	}
	if cp.HasOutput {
		cp.Output = fixtures.RedactAny(cp.Output, rules)
	}
	if cp.Error != nil {
		msg, _ := fixtures.RedactAny(cp.Error.Message, rules).(string)
		cp.Error = &tracer.ErrorInfo{Type: cp.Error.Type, Message: msg}
	}
	if cp.Message != "" {
		cp.Message, _ = fixtures.RedactAny(cp.Message, rules).(string)
	}
	if cp.Outcome != nil {
		o := *cp.Outcome
		o.Value = fixtures.RedactAny(o.Value, rules)
		o.ErrorMessage, _ = fixtures.RedactAny(o.ErrorMessage, rules).(string)
		cp.Outcome = &o
	}
	return cp
}

// finish writes the trace and the recording, whatever the run's outcome.
func (s *session) finish(c *cli, f *runFlags) error {
	var firstErr error
	if s.traceOut != nil {
		if err := s.traceOut.Close(); err != nil && firstErr == nil {
			firstErr = inputf("cannot write trace %s: %v", f.trace, err)
		}
	}
	if s.recorder != nil {
		fx := s.recorder.Fixture(s.source)
		if !f.noRedact {
			rules, err := f.redactionRules()
			if err != nil {
				return err
			}
			var rep fixtures.Report
			fx, rep = fixtures.Redact(fx, rules)
			for _, ch := range rep.Changes {
				fmt.Fprintln(c.stderr, "treelang: redacted", ch.String())
			}
		}
		if err := fixtures.Save(f.record, fx); err != nil && firstErr == nil {
			firstErr = inputf("cannot save fixture %s: %v", f.record, err)
		}
	}
	return firstErr
}

// execute runs `execute` and `replay`.
func (c *cli) execute(ctx context.Context, args []string, replayCmd bool) int {
	name := "execute"
	if replayCmd {
		name = "replay"
	}
	fs := newFlags(name, c.stderr)
	f := addRunFlags(fs)
	var fixture string
	if replayCmd {
		fs.StringVar(&fixture, "fixture", "", "the fixture `FILE` to replay")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return exitInput
	}
	c.json = f.output == "json"
	if f.output != "text" && f.output != "json" {
		return c.fail(inputf("--output must be text or json"), nil)
	}
	if replayCmd {
		if fixture == "" {
			return c.fail(inputf("replay needs --fixture FIXTURE"), nil)
		}
		f.replayFixture = fixture
		if len(pos) == 0 {
			return c.replayAsk(ctx, f)
		}
	}
	if len(pos) != 1 {
		return c.fail(inputf("%s needs exactly one PROGRAM (a file, or - for standard input)", name), nil)
	}
	prog, source, err := c.loadProgram(pos[0])
	if err != nil {
		return c.fail(err, nil)
	}
	s, err := f.prepare(ctx, c, prog, source, nil)
	if err != nil {
		return c.fail(err, nil)
	}
	defer s.close()
	result, runErr := engine.Eval(ctx, prog, s.provider, s.opts)
	if ferr := s.finish(c, f); ferr != nil && runErr == nil {
		runErr = ferr
	}
	var extra map[string]any
	if s.replay != nil {
		cov := s.replay.Coverage()
		extra = map[string]any{"coverage": cov}
		if !c.json {
			fmt.Fprintln(c.stderr, "treelang:", cov.String())
		}
		if runErr == nil && replayCmd {
			runErr = s.replay.AssertConsumed()
		}
	}
	if runErr != nil {
		return c.fail(runErr, extra)
	}
	return c.printResult(result, extra)
}

func (c *cli) printResult(result any, extra map[string]any) int {
	if err := checkJSON(result); err != nil {
		return c.fail(err, extra)
	}
	if c.json {
		out := map[string]any{"ok": true, "result": result}
		for k, v := range extra {
			out[k] = v
		}
		c.writeJSON(out)
		return exitOK
	}
	c.writeJSON(result)
	return exitOK
}

// checkJSON rejects results with no JSON form (a bare lambda's closure).
func checkJSON(v any) error {
	switch x := v.(type) {
	case *engine.Closure:
		return engine.Errorf(engine.TypeError, "Object of type function is not JSON serializable")
	case []any:
		for _, e := range x {
			if err := checkJSON(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := checkJSON(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- validate, inspect, schema ----

func (c *cli) validate(args []string, format, name string) int {
	fs := newFlags(name, c.stderr)
	if name == "inspect" {
		fs.StringVar(&format, "format", "tree", "output format: tree or json")
	}
	out := fs.String("output", "", "write to `FILE` instead of standard output")
	pos, err := parse(fs, args)
	if err != nil {
		return exitInput
	}
	if len(pos) != 1 {
		return c.fail(inputf("%s needs exactly one PROGRAM (a file, or - for standard input)", name), nil)
	}
	prog, _, err := c.loadProgram(pos[0])
	if err != nil {
		return c.fail(err, nil)
	}
	var text []byte
	switch format {
	case "json":
		text = engine.MarshalProgram(prog)
	case "tree":
		text = []byte(engine.FormatTree(prog))
	default:
		return c.fail(inputf("--format must be tree or json"), nil)
	}
	return c.emit(text, *out)
}

func (c *cli) emit(text []byte, out string) int {
	if out == "" {
		c.stdout.Write(text)
		return exitOK
	}
	if err := fixtures.WriteFileAtomic(out, text, 0o644); err != nil {
		return c.fail(inputf("cannot write %s: %v", out, err), nil)
	}
	return exitOK
}

func (c *cli) schema(args []string) int {
	fs := newFlags("schema", c.stderr)
	version := fs.String("schema-version", "1.0", "schema version: 1.0 or 2.0")
	out := fs.String("output", "", "write to `FILE` instead of standard output")
	if _, err := parse(fs, args); err != nil {
		return exitInput
	}
	doc, err := engine.SchemaDocument(*version)
	if err != nil {
		return c.fail(&inputError{err}, nil)
	}
	return c.emit(doc, *out)
}

// ---- trace ----

func (c *cli) trace(ctx context.Context, args []string) int {
	fs := newFlags("trace", c.stderr)
	output := fs.String("output", "", "text: print the timeline instead of opening the debugger")
	pos, err := parse(fs, args)
	if err != nil {
		return exitInput
	}
	if len(pos) != 1 {
		return c.fail(inputf("trace needs exactly one FILE"), nil)
	}
	events, warning, err := tracer.ReadFile(pos[0])
	if err != nil {
		return c.fail(&inputError{err}, nil) // the error names the file
	}
	if warning != "" {
		fmt.Fprintf(c.stderr, "treelang: warning: %s: %s\n", pos[0], warning)
	}
	if *output == "" && !isTerminal(c.stdout) {
		*output = "text" // no screen for the debugger, as in demo
	}
	switch *output {
	case "text":
		if err := tracer.WriteTimeline(c.stdout, events); err != nil {
			return c.fail(err, nil)
		}
		return exitOK
	case "":
	default:
		return c.fail(inputf("--output must be text"), nil)
	}
	spec := tui.RunSpec{Name: pos[0], Mode: "trace", Events: events, Outline: outlineFromEvents(events)}
	if err := tui.Run(ctx, tui.Options{Runs: []tui.RunSpec{spec}}, c.stdin, c.stdout); err != nil {
		return c.fail(err, nil)
	}
	return exitOK
}

// outlineFromEvents rebuilds a program tree from the node paths a trace
// saw, for post-mortem viewing without the program file.
func outlineFromEvents(events []*tracer.Event) []tui.OutlineNode {
	seen := map[string]bool{}
	var out []tui.OutlineNode
	for _, e := range events {
		// Leaves have a node.exit only.
		node := e.Kind == tracer.NodeEnter || (e.Kind == tracer.NodeExit && tracer.IsLeafNode(e.Node))
		if !node || seen[e.Site.Path] {
			continue
		}
		seen[e.Site.Path] = true
		label := e.Tool
		out = append(out, tui.OutlineNode{Path: e.Site.Path, Type: e.Node, Label: label, Depth: strings.Count(e.Site.Path, "/") / 2})
	}
	return out
}

// ---- redact ----

func (c *cli) redact(args []string) int {
	fs := newFlags("redact", c.stderr)
	rulesFile := fs.String("rules", "", "redaction rules `FILE` (JSON); default rules otherwise")
	out := fs.String("o", "", "write the redacted fixture to `FILE` (default: rewrite FIXTURE in place)")
	check := fs.Bool("check", false, "only check: exit 1 when a detector still finds something")
	pos, err := parse(fs, args)
	if err != nil {
		return exitInput
	}
	if len(pos) != 1 {
		return c.fail(inputf("redact needs exactly one FIXTURE"), nil)
	}
	rules := fixtures.DefaultRules()
	if *rulesFile != "" {
		if rules, err = fixtures.LoadRules(*rulesFile); err != nil {
			return c.fail(&inputError{err}, nil)
		}
	}
	fx, err := fixtures.Load(pos[0])
	if err != nil {
		return c.fail(&inputError{err}, nil)
	}
	if *check {
		hits := fixtures.Check(fx, rules)
		for _, h := range hits {
			fmt.Fprintf(c.stdout, "%s: %s\n", pos[0], h.String())
		}
		if len(hits) > 0 {
			fmt.Fprintf(c.stderr, "treelang: %s: %d secret(s) found; run treelang redact %s\n", pos[0], len(hits), pos[0])
			return exitCheck
		}
		return exitOK
	}
	red, rep := fixtures.Redact(fx, rules)
	for _, ch := range rep.Changes {
		fmt.Fprintln(c.stdout, ch.String())
	}
	target := *out
	if target == "" {
		target = pos[0]
	}
	if err := fixtures.Save(target, red); err != nil {
		return c.fail(inputf("cannot save %s: %v", target, err), nil)
	}
	fmt.Fprintf(c.stderr, "treelang: %d change(s); wrote %s\n", len(rep.Changes), target)
	return exitOK
}

// ---- tools list and serve ----

// listTools prints the tools a provider offers: parameters in binding
// order, description, and MCP annotations (hints, never trusted unless
// --trust-idempotent-hints), with the provider's warnings.
func (c *cli) listTools(ctx context.Context, args []string) int {
	fs := newFlags("tools list", c.stderr)
	f := addRunFlags(fs)
	if _, err := parse(fs, args); err != nil {
		return exitInput
	}
	c.json = f.output == "json"
	pol := engine.Policy{}
	p, closeFn, err := f.provider(ctx, c, &pol)
	if err != nil {
		return c.fail(err, nil)
	}
	defer closeFn()
	defs, err := p.ListTools(ctx)
	if err != nil {
		return c.fail(&providerError{err}, nil)
	}
	if c.json {
		c.writeJSON(defs)
		return exitOK
	}
	for _, d := range defs {
		fmt.Fprintf(c.stdout, "%s(%s)", d.Name, strings.Join(d.PropertyNames(), ", "))
		if a := d.Annotations; a != nil {
			var hints []string
			for _, h := range []struct {
				name string
				v    *bool
			}{{"read-only", a.ReadOnly}, {"destructive", a.Destructive}, {"idempotent", a.Idempotent}, {"open-world", a.OpenWorld}} {
				if h.v != nil && *h.v {
					hints = append(hints, h.name)
				}
			}
			if len(hints) > 0 {
				fmt.Fprintf(c.stdout, "  [%s]", strings.Join(hints, ", "))
			}
		}
		if d.Description != "" {
			fmt.Fprintf(c.stdout, "  %s", d.Description)
		}
		fmt.Fprintln(c.stdout)
	}
	return exitOK
}

func (c *cli) tools(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "list" {
		return c.listTools(ctx, args[1:])
	}
	if len(args) == 0 || args[0] != "serve" {
		return c.fail(inputf("usage: treelang tools serve [--tools FILE] [--http ADDR] | treelang tools list [tool flags]"), nil)
	}
	fs := newFlags("tools serve", c.stderr)
	file := fs.String("tools", "", "toolbox `FILE` to serve (default: the builtin tools)")
	addr := fs.String("http", "", "serve streamable HTTP on `ADDR` (loopback, e.g. 127.0.0.1:8080) instead of stdio")
	if _, err := parse(fs, args[1:]); err != nil {
		return exitInput
	}
	var p engine.ToolProvider = tools.Builtins()
	if *file != "" {
		tb, err := tools.Load(*file)
		if err != nil {
			return c.fail(&inputError{err}, nil)
		}
		p = tb
	}
	if *addr != "" {
		// Loopback only; the address is printed once listening, so a port
		// of 0 shows the one chosen. Stopping cancels calls in flight.
		err := mcp.ServeHTTP(ctx, p, *addr, func(a net.Addr) {
			fmt.Fprintf(c.stderr, "treelang: serving MCP over HTTP on %s\n", a)
		})
		if err != nil && ctx.Err() == nil {
			if errors.Is(err, engine.ValueError) {
				return c.fail(&inputError{err}, nil)
			}
			return c.fail(&providerError{err}, nil)
		}
		return exitOK
	}
	if err := mcp.ServeStdio(ctx, p, c.stdin, c.stdout); err != nil && ctx.Err() == nil {
		return c.fail(&providerError{err}, nil)
	}
	return exitOK
}

// ---- generate and ask ----

type modelFlags struct {
	baseURL, apiKey, model, schemaVersion string
	timeout                               time.Duration
	repairs                               int
}

func addModelFlags(fs *flag.FlagSet) *modelFlags {
	m := &modelFlags{}
	fs.StringVar(&m.baseURL, "base-url", "", "OpenAI-compatible API root (default $OPENAI_BASE_URL or https://api.openai.com/v1)")
	fs.StringVar(&m.apiKey, "api-key", "", "API key (default $OPENAI_API_KEY)")
	fs.StringVar(&m.model, "model", "gpt-4o-mini", "model name")
	fs.StringVar(&m.schemaVersion, "schema-version", "1.0", "program schema to ask for: 1.0 or 2.0")
	fs.DurationVar(&m.timeout, "model-timeout", 60*time.Second, "deadline of one model request")
	fs.IntVar(&m.repairs, "repairs", model.DefaultMaxRepairs, "how often an invalid program is sent back for correction")
	return m
}

func (c *cli) ask(ctx context.Context, args []string, execute bool) int {
	name := "generate"
	if execute {
		name = "ask"
	}
	fs := newFlags(name, c.stderr)
	f := addRunFlags(fs)
	m := addModelFlags(fs)
	debug := fs.Bool("debug", false, "ask: open the debugger, showing the model request and response first")
	pos, err := parse(fs, args)
	if err != nil {
		return exitInput
	}
	c.json = f.output == "json"
	if len(pos) != 1 {
		return c.fail(inputf("%s needs exactly one \"QUESTION\" (or - for standard input)", name), nil)
	}
	// Refuse what would otherwise be ignored: --replay would still call the
	// live model, and generate has no run to record.
	if f.replayFixture != "" {
		return c.fail(inputf("%s does not take --replay; replay a recorded ask with: treelang replay --fixture FIXTURE", name), nil)
	}
	if !execute && f.record != "" {
		return c.fail(inputf("generate does not record; use: treelang ask \"QUESTION\" --record FIXTURE"), nil)
	}
	question := pos[0]
	if question == "-" {
		data, err := c.readInput("-")
		if err != nil {
			return c.fail(err, nil)
		}
		question = strings.TrimSpace(string(data))
	}
	transport, err := model.NewOpenAI(model.ConfigFromEnv(model.OpenAIConfig{BaseURL: m.baseURL, APIKey: m.apiKey, Model: m.model, Timeout: m.timeout}))
	if err != nil {
		return c.fail(err, nil)
	}
	// Policy and limits are checked before the model is asked, and the
	// MCP idempotent hints (--trust-idempotent-hints) add to the policy.
	pol, lim, err := f.policyAndLimits(c)
	if err != nil {
		return c.fail(err, nil)
	}
	live, closeFn, err := f.provider(ctx, c, &pol)
	if err != nil {
		return c.fail(err, nil)
	}
	defer closeFn()
	return c.planAndRun(ctx, f, m, question, transport, live, pol, lim, execute, *debug)
}

// planAndRun plans a program for question and, for ask, executes it; with
// --record, the model calls and the tool calls go into one fixture.
func (c *cli) planAndRun(ctx context.Context, f *runFlags, m *modelFlags, question string, transport engine.ModelTransport, live engine.ToolProvider, pol engine.Policy, lim engine.Limits, execute, debug bool) int {
	var rec *replay.Recorder
	if f.record != "" {
		rec = replay.NewRecorder(live)
		transport = rec.RecordModel(transport)
		live = rec
	}
	defs, err := live.ListTools(ctx)
	if err != nil {
		return c.fail(&providerError{err}, nil)
	}
	planner := &model.Planner{Transport: transport, Model: m.model, SchemaVersion: m.schemaVersion, MaxRepairs: m.repairs,
		Validate: func(p []byte) error { _, err := engine.ParseProgram(p); return err }}
	if debug && execute {
		if !isTerminal(c.stdout) {
			return c.fail(inputf("ask --debug needs a terminal; headless, use --trace FILE"), nil)
		}
		return c.debugAsk(ctx, f, planner, question, defs, live, rec)
	}
	var t *tracer.Tracer
	if f.trace != "" {
		w, err := f.openTrace()
		if err != nil {
			return c.fail(err, nil)
		}
		defer w.Close()
		t = tracer.New(w)
		planner.Tracer = t
	}
	plan, err := planner.Plan(ctx, question, defs)
	if err != nil {
		if rec != nil {
			c.saveAsk(f, rec, question, nil)
		}
		return c.fail(err, nil)
	}
	if !execute {
		c.stdout.Write(plan.Program)
		if len(plan.Program) > 0 && plan.Program[len(plan.Program)-1] != '\n' {
			c.stdout.Write([]byte("\n"))
		}
		return exitOK
	}
	prog, err := engine.ParseProgram(plan.Program)
	if err != nil {
		return c.fail(err, nil)
	}
	fmt.Fprintf(c.stderr, "treelang: planned program:\n%s\n", plan.Program)
	s := &session{prog: prog, source: plan.Program, provider: live}
	s.opts.Policy, s.opts.Limits = pol, lim
	if rec != nil {
		s.opts.Clock = rec.Clock(nil)
	}
	if t != nil {
		s.opts.Tracer = t
	}
	result, runErr := engine.Eval(ctx, prog, s.provider, s.opts)
	if rec != nil {
		if err := c.saveAsk(f, rec, question, plan.Program); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return c.fail(runErr, nil)
	}
	return c.printResult(result, nil)
}

func (c *cli) saveAsk(f *runFlags, rec *replay.Recorder, question string, program []byte) error {
	fx := rec.Fixture(program)
	fx.Question = question
	if program != nil {
		fx.Program = json.RawMessage(bytes.TrimSpace(program))
	}
	if !f.noRedact {
		rules, err := f.redactionRules()
		if err != nil {
			return err
		}
		fx, _ = fixtures.Redact(fx, rules)
	}
	return fixtures.Save(f.record, fx)
}

// redactionRules are the --rules file's, or the defaults.
func (f *runFlags) redactionRules() (fixtures.Rules, error) {
	if f.rules == "" {
		return fixtures.DefaultRules(), nil
	}
	r, err := fixtures.LoadRules(f.rules)
	if err != nil {
		return r, &inputError{err}
	}
	return r, nil
}

// replayAsk replays a recorded ask end to end: planning from the model
// calls, then the program against the tool calls, with no network.
func (c *cli) replayAsk(ctx context.Context, f *runFlags) int {
	fx, err := fixtures.Load(f.replayFixture)
	if err != nil {
		return c.fail(&inputError{err}, nil)
	}
	if fx.Question == "" || len(fx.ModelCalls) == 0 {
		return c.fail(inputf("%s is not an ask recording (no question and model_calls); pass the PROGRAM to replay", f.replayFixture), nil)
	}
	models := replay.NewModelReplay(fx.ModelCalls)
	rp, err := replay.NewToolReplay(fx, replay.Options{Stall: f.stall})
	if err != nil {
		return c.fail(&inputError{err}, nil)
	}
	req, _ := fx.ModelCalls[0].Request["model"].(string)
	version := "1.0"
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if json.Unmarshal(fx.Program, &head) == nil && head.SchemaVersion == "2.0" {
		version = "2.0"
	}
	planner := &model.Planner{Transport: models, Model: req, SchemaVersion: version, MaxRepairs: len(fx.ModelCalls) - 1,
		Validate: func(p []byte) error { _, err := engine.ParseProgram(p); return err }}
	plan, err := planner.Plan(ctx, fx.Question, fx.Tools)
	if err != nil {
		return c.fail(err, nil)
	}
	prog, err := engine.ParseProgram(plan.Program)
	if err != nil {
		return c.fail(err, nil)
	}
	pol, lim, err := f.policyAndLimits(c)
	if err != nil {
		return c.fail(err, nil)
	}
	result, runErr := engine.Eval(ctx, prog, rp, engine.Options{Policy: pol, Limits: lim, Clock: rp.Clock()})
	if runErr == nil {
		runErr = rp.AssertConsumed()
	}
	if runErr == nil {
		runErr = models.AssertConsumed()
	}
	if runErr != nil {
		return c.fail(runErr, nil)
	}
	return c.printResult(result, map[string]any{"coverage": rp.Coverage()})
}

// ---- the debugger ----

func (c *cli) debug(ctx context.Context, args []string) int {
	fs := newFlags("debug", c.stderr)
	f := addRunFlags(fs)
	keys := fs.String("keys", "", "key bindings `FILE` (JSON)")
	paused := fs.Bool("paused", true, "start paused at the first event")
	pos, err := parse(fs, args)
	if err != nil {
		return exitInput
	}
	if len(pos) != 1 {
		return c.fail(inputf("debug needs exactly one PROGRAM"), nil)
	}
	if !isTerminal(c.stdout) {
		return c.fail(inputf("debug needs a terminal; headless, use: treelang execute %s --trace FILE, then treelang trace FILE --output text", pos[0]), nil)
	}
	prog, source, err := c.loadProgram(pos[0])
	if err != nil {
		return c.fail(err, nil)
	}
	spec, err := c.debugSpec(ctx, f, prog, source, pos[0])
	if err != nil {
		return c.fail(err, nil)
	}
	if err := tui.Run(ctx, tui.Options{Runs: []tui.RunSpec{spec}, KeyMapFile: *keys, StartPaused: *paused}, c.stdin, c.stdout); err != nil {
		return c.fail(err, nil)
	}
	return exitOK
}

// debugSpec builds the debugger's run: each start prepares a fresh
// provider (a fresh replay cursor, a fresh recorder) and writes the trace
// and the recording when the run ends.
func (c *cli) debugSpec(ctx context.Context, f *runFlags, prog *engine.Program, source []byte, name string) (tui.RunSpec, error) {
	pol, _, err := f.policyAndLimits(c)
	if err != nil {
		return tui.RunSpec{}, err
	}
	mode := "live"
	if f.replayFixture != "" {
		mode = "replay"
	}
	var current atomic.Pointer[session] // set by the run, read by the debugger's accept
	spec := tui.RunSpec{Name: name, Mode: mode, Outline: tui.ProgramOutline(prog), Policy: engine.Summary(pol, engine.Limits{})}
	spec.Run = func(ctx context.Context, t *tracer.Tracer) (any, error) {
		s, err := f.prepare(ctx, c, prog, source, t)
		if err != nil {
			return nil, err
		}
		defer s.close()
		if s.recorder == nil {
			// Always record, so the save dialog can write a fixture.
			s.recorder = replay.NewRecorder(s.provider)
			s.provider = s.recorder
			s.opts.Clock = s.recorder.Clock(s.opts.Clock)
		}
		current.Store(s)
		res, err := engine.Eval(ctx, prog, s.provider, s.opts)
		if ferr := s.finish(c, f); ferr != nil && err == nil {
			err = ferr
		}
		return res, err
	}
	rules, err := f.redactionRules()
	if err != nil {
		return tui.RunSpec{}, err
	}
	spec.Saver = tui.FixtureSaver(func() *fixtures.Fixture {
		if s := current.Load(); s != nil && s.recorder != nil {
			return s.recorder.Fixture(source)
		}
		return nil
	}, rules)
	if f.replayFixture != "" {
		spec.AcceptMismatch = func(*tracer.Event) error {
			s := current.Load()
			if s == nil || s.replay == nil {
				return errors.New("no replay is running")
			}
			s.replay.Accept()
			return nil
		}
	}
	return spec, nil
}

func (c *cli) debugAsk(ctx context.Context, f *runFlags, planner *model.Planner, question string, defs []*engine.ToolDefinition, live engine.ToolProvider, rec *replay.Recorder) int {
	spec := tui.RunSpec{Name: "ask: " + question, Mode: "live"}
	spec.Run = func(ctx context.Context, t *tracer.Tracer) (any, error) {
		planner.Tracer = t
		plan, err := planner.Plan(ctx, question, defs)
		if err != nil {
			return nil, err
		}
		prog, err := engine.ParseProgram(plan.Program)
		if err != nil {
			return nil, err
		}
		pol, lim, err := f.policyAndLimits(c)
		if err != nil {
			return nil, err
		}
		opts := engine.Options{Policy: pol, Limits: lim, Tracer: t}
		if rec != nil {
			opts.Clock = rec.Clock(nil)
		}
		res, err := engine.Eval(ctx, prog, live, opts)
		if rec != nil {
			_ = c.saveAsk(f, rec, question, plan.Program)
		}
		return res, err
	}
	if err := tui.Run(ctx, tui.Options{Runs: []tui.RunSpec{spec}}, c.stdin, c.stdout); err != nil {
		return c.fail(err, nil)
	}
	return exitOK
}

// ---- demo ----

func (c *cli) demo(ctx context.Context, args []string) int {
	fs := newFlags("demo", c.stderr)
	headless := fs.Bool("headless", false, "print the demo's timelines instead of opening the debugger")
	keys := fs.String("keys", "", "key bindings `FILE` (JSON)")
	if _, err := parse(fs, args); err != nil {
		return exitInput
	}
	if *headless || !isTerminal(c.stdout) {
		if err := demo.RunHeadless(ctx, c.stdout); err != nil {
			return c.fail(err, nil)
		}
		return exitOK
	}
	if err := tui.Run(ctx, tui.Options{Runs: demo.Runs(), KeyMapFile: *keys}, c.stdin, c.stdout); err != nil {
		return c.fail(err, nil)
	}
	return exitOK
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
