package demo

import (
	"context"
	"embed"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
	"github.com/treelang/treelang/fixtures"
	"github.com/treelang/treelang/replay"
	"github.com/treelang/treelang/tracer"
	"github.com/treelang/treelang/tui"
)

//go:embed program.json drifted.json toolbox.json policy.json recorded.json
var files embed.FS

// Scenario is one run of the demo.
type Scenario struct {
	Name    string
	Program *engine.Program
	Source  []byte
	Policy  engine.Policy
	Limits  engine.Limits
	Fixture *fixtures.Fixture // replay scenarios serve this instead of the toolbox
}

func mustRead(name string) []byte {
	data, err := files.ReadFile(name)
	if err != nil {
		panic("demo: missing embedded " + name) // build-time invariant
	}
	return data
}

// Scenarios returns the demo's runs in the order they are best watched.
func Scenarios() ([]Scenario, error) {
	src := mustRead("program.json")
	prog, err := engine.ParseProgram(src)
	if err != nil {
		return nil, fmt.Errorf("demo program: %w", err)
	}
	drifted := mustRead("drifted.json")
	dprog, err := engine.ParseProgram(drifted)
	if err != nil {
		return nil, fmt.Errorf("demo drifted program: %w", err)
	}
	pol, lim, err := engine.ParsePolicy(mustRead("policy.json"))
	if err != nil {
		return nil, fmt.Errorf("demo policy: %w", err)
	}
	collect := pol
	collect.ParallelFailures = engine.FailCollect
	fx, err := fixtures.Parse(mustRead("recorded.json"), "recorded.json")
	if err != nil {
		return nil, err
	}
	return []Scenario{
		{Name: "fail fast: retries, no retry, cancelled sibling", Program: prog, Source: src, Policy: pol, Limits: lim},
		{Name: "collect: BranchOutcomes", Program: prog, Source: src, Policy: collect, Limits: lim},
		{Name: "replay: the recording", Program: prog, Source: src, Policy: collect, Limits: lim, Fixture: fx},
		{Name: "replay drift: quantity changed", Program: dprog, Source: drifted, Policy: collect, Limits: lim, Fixture: fx},
	}, nil
}

// Toolbox returns a fresh copy of the demo's flaky toolbox (its scripts
// start over).
func Toolbox() *tools.Toolbox {
	tb, err := tools.Parse(mustRead("toolbox.json"), "demo/toolbox.json")
	if err != nil {
		panic("demo: embedded toolbox: " + err.Error()) // build-time invariant, tested
	}
	return tb
}

// Run executes the scenario once, emitting into em (may be nil). Replay
// scenarios accept drifting calls through the returned replay when
// interactive is set.
func (s Scenario) Run(ctx context.Context, em engine.Emitter, interactive bool) (any, *replay.ToolReplay, error) {
	provider, opts, rp, err := s.prepare(em, interactive)
	if err != nil {
		return nil, nil, err
	}
	v, err := engine.Eval(ctx, s.Program, provider, opts)
	return v, rp, err
}

// prepare builds the scenario's provider (a fresh toolbox, or a replay of
// its fixture) and options.
func (s Scenario) prepare(em engine.Emitter, interactive bool) (engine.ToolProvider, engine.Options, *replay.ToolReplay, error) {
	opts := engine.Options{Policy: s.Policy, Limits: s.Limits, Tracer: em}
	if s.Fixture == nil {
		return Toolbox(), opts, nil, nil
	}
	rp, err := replay.NewToolReplay(cloneFixture(s.Fixture), replay.Options{Tracer: em, Interactive: interactive})
	if err != nil {
		return nil, opts, nil, err
	}
	opts.Clock = rp.Clock()
	return rp, opts, rp, nil
}

func cloneFixture(f *fixtures.Fixture) *fixtures.Fixture {
	cp := *f
	cp.Calls = append([]fixtures.Call(nil), f.Calls...)
	return &cp
}

// Record records the collect scenario live, as recorded.json holds it.
func Record(ctx context.Context) (*fixtures.Fixture, error) {
	sc, err := Scenarios()
	if err != nil {
		return nil, err
	}
	s := sc[1]
	rec := replay.NewRecorder(Toolbox())
	_, err = engine.Eval(ctx, s.Program, rec, engine.Options{Policy: s.Policy, Limits: s.Limits, Clock: rec.Clock(nil)})
	if err != nil {
		return nil, err
	}
	return rec.Fixture(s.Source), nil
}

// Runs returns the debugger's runs for `treelang demo`.
func Runs() []tui.RunSpec {
	sc, err := Scenarios()
	if err != nil {
		return nil
	}
	var out []tui.RunSpec
	for _, s := range sc {
		mode := "live"
		if s.Fixture != nil {
			mode = "replay"
		}
		var current atomic.Pointer[replay.ToolReplay] // set by the run, read by the debugger
		var recorder atomic.Pointer[replay.Recorder]
		spec := tui.RunSpec{Name: s.Name, Mode: mode, Outline: tui.ProgramOutline(s.Program), Policy: engine.Summary(s.Policy, s.Limits)}
		spec.Run = func(ctx context.Context, t *tracer.Tracer) (any, error) {
			provider, opts, rp, err := s.prepare(t, true)
			if err != nil {
				return nil, err
			}
			current.Store(rp)
			rec := replay.NewRecorder(provider)
			recorder.Store(rec)
			opts.Clock = rec.Clock(opts.Clock)
			return engine.Eval(ctx, s.Program, rec, opts)
		}
		spec.Saver = tui.FixtureSaver(func() *fixtures.Fixture {
			if rec := recorder.Load(); rec != nil {
				return rec.Fixture(s.Source)
			}
			return nil
		}, fixtures.DefaultRules())
		if s.Fixture != nil {
			spec.AcceptMismatch = func(*tracer.Event) error {
				rp := current.Load()
				if rp == nil {
					return fmt.Errorf("no replay is running")
				}
				rp.Accept()
				return nil
			}
		}
		out = append(out, spec)
	}
	return out
}

// RunHeadless runs every scenario and prints its timeline and result: the
// demo for a terminal that is not interactive (or CI).
func RunHeadless(ctx context.Context, w io.Writer) error {
	sc, err := Scenarios()
	if err != nil {
		return err
	}
	for i, s := range sc {
		fmt.Fprintf(w, "=== %d/%d %s\n", i+1, len(sc), s.Name)
		fmt.Fprintf(w, "policy: %s\n", engine.Summary(s.Policy, s.Limits))
		tl := tracer.NewTimeline(w)
		t := tracer.New(tl)
		v, _, err := s.Run(ctx, t, false)
		if cerr := t.Close(); cerr != nil {
			return cerr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(w, "result: %s: %s\n\n", engine.TypeOf(err), err)
			continue
		}
		data, _ := engine.EncodeValue(v)
		fmt.Fprintf(w, "result: %s\n\n", data)
	}
	return nil
}
