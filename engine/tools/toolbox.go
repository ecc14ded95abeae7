package tools

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/treelang/treelang/engine"
)

// Toolbox is a tool provider whose tools behave as a toolbox file (or
// Builtins) describes. It is safe for concurrent use.
type Toolbox struct {
	source string
	tools  []*tool // in file order
	byName map[string]*tool
	defs   []*engine.ToolDefinition
	clock  atomic.Pointer[clockBox]
}

type clockBox struct{ engine.Clock }

type behaviorKind uint8

const (
	kindBuiltin behaviorKind = iota + 1
	kindOutput
	kindTable
	kindScript
	kindError // script steps only
)

// step is what one attempt does: return an output, compute a builtin or
// fail with a typed error, after an optional delay. A behavior is a step
// too, plus a table or a script.
type step struct {
	kind    behaviorKind
	delay   time.Duration
	builtin builtin
	output  any
	errType engine.ErrorType
	message string

	table  []row  // kindTable
	script []step // kindScript
	then   *step  // kindScript: the step after the script; nil means the last one
}

type row struct {
	arguments map[string]any
	output    any
}

// tool is one tool of a toolbox with its counters.
type tool struct {
	def      *engine.ToolDefinition
	names    []string // def's property names, in order
	behavior step
	raw      json.RawMessage // the behavior as the file wrote it (for MarshalJSON)

	calls     atomic.Int64
	active    atomic.Int64
	maxActive atomic.Int64

	mu        sync.Mutex
	positions map[string]int // canonical arguments -> attempts started (scripts only)
}

func newToolbox(source string, tools []*tool) *Toolbox {
	tb := &Toolbox{source: source, tools: tools, byName: make(map[string]*tool, len(tools))}
	tb.defs = make([]*engine.ToolDefinition, len(tools))
	for i, t := range tools {
		t.names = t.def.PropertyNames()
		tb.byName[t.def.Name] = t
		tb.defs[i] = t.def
	}
	return tb
}

// SetClock sets the clock that delays sleep on (engine.RealClock{} by
// default), so tests and replays can run delays on virtual time.
func (tb *Toolbox) SetClock(c engine.Clock) {
	if c == nil {
		tb.clock.Store(nil)
		return
	}
	tb.clock.Store(&clockBox{c})
}

func (tb *Toolbox) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if c := tb.clock.Load(); c != nil {
		return c.Sleep(ctx, d)
	}
	return engine.RealClock{}.Sleep(ctx, d)
}

// ListTools returns the definitions in file order.
func (tb *Toolbox) ListTools(context.Context) ([]*engine.ToolDefinition, error) {
	return slices.Clone(tb.defs), nil
}

// Tool returns one definition, or a ToolNotFoundError.
func (tb *Toolbox) Tool(_ context.Context, name string) (*engine.ToolDefinition, error) {
	if t := tb.byName[name]; t != nil {
		return t.def, nil
	}
	return nil, engine.NotFound(name)
}

// CallTool runs one attempt of a tool. The attempt counts as started (for
// Calls and for a script's position) before any delay; delays return the
// context's error as soon as ctx is done.
func (tb *Toolbox) CallTool(ctx context.Context, call *engine.Call) (any, error) {
	t := tb.byName[call.Tool]
	if t == nil {
		return nil, engine.NotFound(call.Tool)
	}
	t.calls.Add(1)
	n := t.active.Add(1)
	for {
		m := t.maxActive.Load()
		if n <= m || t.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	defer t.active.Add(-1)

	b := &t.behavior
	s := b
	if b.kind == kindScript {
		s = t.next(call.Arguments)
	}
	if err := tb.sleep(ctx, b.delay); err != nil {
		return nil, err
	}
	if s != b {
		if err := tb.sleep(ctx, s.delay); err != nil {
			return nil, err
		}
	}
	return t.run(s, call.Arguments)
}

// next advances the script position of these arguments and returns the
// step this attempt takes.
func (t *tool) next(args map[string]any) *step {
	key := []byte("{}") // nil and empty arguments are the same call
	if len(args) > 0 {
		var err error
		if key, err = engine.EncodeValue(args); err != nil {
			key = nil // not JSON: such calls share one position
		}
	}
	t.mu.Lock()
	if t.positions == nil {
		t.positions = make(map[string]int)
	}
	pos := t.positions[string(key)]
	t.positions[string(key)] = pos + 1
	t.mu.Unlock()
	b := &t.behavior
	switch {
	case pos < len(b.script):
		return &b.script[pos]
	case b.then != nil:
		return b.then
	}
	return &b.script[len(b.script)-1]
}

func (t *tool) run(s *step, args map[string]any) (any, error) {
	switch s.kind {
	case kindOutput:
		return engine.CloneValue(s.output), nil
	case kindError:
		return nil, &engine.Error{Type: s.errType, Message: s.message}
	case kindBuiltin:
		var buf [4]operand
		ops := buf[:0]
		for _, name := range t.names {
			if v, ok := args[name]; ok {
				ops = append(ops, operand{name, v})
			}
		}
		return s.builtin.apply(t.def.Name, ops)
	case kindTable:
		for i := range s.table {
			if engine.Equal(s.table[i].arguments, map[string]any(args)) {
				return engine.CloneValue(s.table[i].output), nil
			}
		}
		text, _ := engine.EncodeValue(args)
		return nil, execError("Tool '%s' has no table row for arguments %s", t.def.Name, text)
	}
	return nil, execError("Tool '%s' has no behavior", t.def.Name)
}

// Calls returns how many attempts of the tool have started since the
// toolbox was made or last Reset.
func (tb *Toolbox) Calls(name string) int {
	if t := tb.byName[name]; t != nil {
		return int(t.calls.Load())
	}
	return 0
}

// Active returns how many calls of the tool are running now.
func (tb *Toolbox) Active(name string) int {
	if t := tb.byName[name]; t != nil {
		return int(t.active.Load())
	}
	return 0
}

// MaxActive returns the largest number of calls of the tool that ran at the
// same time since the toolbox was made or last Reset.
func (tb *Toolbox) MaxActive(name string) int {
	if t := tb.byName[name]; t != nil {
		return int(t.maxActive.Load())
	}
	return 0
}

// Reset zeroes the call counters and rewinds every script to its first
// step. MaxActive restarts from the calls running now.
func (tb *Toolbox) Reset() {
	for _, t := range tb.tools {
		t.calls.Store(0)
		t.maxActive.Store(t.active.Load())
		t.mu.Lock()
		t.positions = nil
		t.mu.Unlock()
	}
}

// Source returns the name the toolbox was loaded from ("builtins" for
// Builtins()).
func (tb *Toolbox) Source() string { return tb.source }

// MarshalJSON writes the toolbox in the file format: each tool's normalized
// definition with its behavior as the source wrote it.
func (tb *Toolbox) MarshalJSON() ([]byte, error) {
	out := []byte(`{"tools":[`)
	for i, t := range tb.tools {
		if i > 0 {
			out = append(out, ',')
		}
		def, err := t.def.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, def[:len(def)-1]...)
		out = append(out, `,"behavior":`...)
		out = append(out, t.raw...)
		out = append(out, '}')
	}
	return append(out, "]}"...), nil
}
