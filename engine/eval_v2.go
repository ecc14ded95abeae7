package engine

import (
	"context"
	"strings"

	"github.com/treelang/treelang/tracer"
)

// evalProgramV2 runs a schema 2.0 program: it counts the program node at
// depth 1, then starts the deadline, then runs the body items as sibling
// operations, each on its own explicit-stack machine (reference §3.3).
func (r *run) evalProgramV2(ctx context.Context, prog *Program, startDeadline func()) (any, error) {
	if prog.defIndex == nil {
		if err := validateV2(prog); err != nil {
			return nil, err
		}
	}
	if err := r.count(ctx, 1, prog.path, nil, -1); err != nil {
		return nil, err
	}
	startDeadline()
	r.memos = map[string]*memoEntry{}
	return r.body(ctx, prog, &scope{branch: -1}, true, func(ctx context.Context, sc *scope, i int) (any, error) {
		m := &machine{r: r, branch: sc.branch, sc: sc}
		return m.run(ctx, prog.Body[i])
	})
}

type v2op uint8

const (
	opEval v2op = iota
	opCond
	opCallBody
	opTool
	opMemoStore
	opExit
)

type task struct {
	op    v2op
	n     Node
	depth int32
	cd    int32 // user-function call depth
	visit int32 // for tool calls: earlier evaluations of the node in this branch
	env   []any
}

// memoEntry is one memo key of a run: a lock that serializes its first
// evaluation across branches, and the cached value.
type memoEntry struct {
	lock  chan struct{}
	owner *machine
	done  bool
	value any
}

// machine evaluates one schema 2.0 expression without host recursion:
// work is a stack of tasks and values a stack of results, so recursion
// depth is bounded only by the budget and memory.
type machine struct {
	r      *run
	branch int
	sc     *scope
	tasks  []task
	vals   []any
	held   []*memoEntry
	visits map[*ToolCall]int32
	steps  int
}

func (m *machine) run(ctx context.Context, root Node) (any, error) {
	m.tasks = append(m.tasks, task{op: opEval, n: root, depth: 2})
	for len(m.tasks) > 0 {
		t := m.tasks[len(m.tasks)-1]
		m.tasks = m.tasks[:len(m.tasks)-1]
		if err := m.step(ctx, t); err != nil {
			m.release()
			err = at(err, t.n.Path())
			m.unwind(ctx, err)
			return nil, err
		}
	}
	return m.vals[len(m.vals)-1], nil
}

// unwind reports node.exit with the error for every node still open when
// evaluation failed, innermost first.
func (m *machine) unwind(ctx context.Context, err error) {
	r := m.r
	if r.tr == nil {
		return
	}
	info := errorInfo(err)
	for i := len(m.tasks) - 1; i >= 0; i-- {
		t := m.tasks[i]
		if t.op != opExit {
			continue
		}
		_ = r.tr.Emit(r.emitCtx(ctx), &tracer.Event{Kind: tracer.NodeExit, Site: m.site(t.n, t.visit), Node: t.n.Kind().String(),
			Branch: m.branch, Depth: int(t.depth), Error: info})
	}
	m.tasks = m.tasks[:0]
}

// release unlocks every memo key this machine holds, after a failure.
func (m *machine) release() {
	for i := len(m.held) - 1; i >= 0; i-- {
		e := m.held[i]
		e.owner = nil
		<-e.lock
	}
	m.held = nil
}

func (m *machine) push(v any) { m.vals = append(m.vals, v) }

func (m *machine) pop(n int) []any {
	out := m.vals[len(m.vals)-n:]
	m.vals = m.vals[:len(m.vals)-n]
	return out
}

func (m *machine) step(ctx context.Context, t task) error {
	r := m.r
	switch t.op {
	case opEval:
		var visit int32
		if tc, ok := t.n.(*ToolCall); ok {
			if m.visits == nil {
				m.visits = map[*ToolCall]int32{}
			}
			visit = m.visits[tc]
			m.visits[tc] = visit + 1
		}
		if err := r.count(ctx, int(t.depth), t.n.Path(), m.site(t.n, visit).Iter, m.branch); err != nil {
			return err
		}
		if r.tr != nil {
			if !isLeaf(t.n) { // a leaf's node.exit alone reports it
				if err := r.tr.Emit(ctx, &tracer.Event{Kind: tracer.NodeEnter, Site: m.site(t.n, visit), Node: t.n.Kind().String(), Branch: m.branch, Depth: int(t.depth)}); err != nil {
					return err
				}
			}
			m.tasks = append(m.tasks, task{op: opExit, n: t.n, depth: t.depth, visit: visit})
		}
		switch x := t.n.(type) {
		case *Literal:
			m.push(x.Value)
		case *Variable:
			m.push(t.env[x.slot])
		case *Conditional:
			m.tasks = append(m.tasks, task{op: opCond, n: x, depth: t.depth, cd: t.cd, env: t.env},
				task{op: opEval, n: x.Condition, depth: t.depth + 1, cd: t.cd, env: t.env})
		case *UserCall:
			callee := int64(t.cd) + 1
			if max := r.limits.MaxCallDepth; max > 0 && callee > max {
				return r.limitErr("call_depth", max, tracer.Site{Path: x.path}, m.branch)
			}
			m.tasks = append(m.tasks, task{op: opCallBody, n: x, depth: t.depth, cd: t.cd})
			for i := len(x.Arguments) - 1; i >= 0; i-- {
				m.tasks = append(m.tasks, task{op: opEval, n: x.Arguments[i], depth: t.depth + 1, cd: t.cd, env: t.env})
			}
		case *ToolCall:
			m.tasks = append(m.tasks, task{op: opTool, n: x, depth: t.depth, cd: t.cd, visit: visit})
			for i := len(x.Arguments) - 1; i >= 0; i-- {
				m.tasks = append(m.tasks, task{op: opEval, n: x.Arguments[i], depth: t.depth + 1, cd: t.cd, env: t.env})
			}
		case *Memo:
			e, err := m.lockMemo(ctx, x)
			if err != nil {
				return err
			}
			if e.done {
				m.unlock(e)
				m.push(e.value)
				break
			}
			m.tasks = append(m.tasks, task{op: opMemoStore, n: x, depth: t.depth},
				task{op: opEval, n: x.Expression, depth: t.depth + 1, cd: t.cd})
		default:
			return Errorf(ValueError, "cannot evaluate %s node in schema 2.0", t.n.Kind())
		}
	case opCond:
		c := m.pop(1)[0]
		x := t.n.(*Conditional)
		branch := x.FalseBranch
		if Truthy(c) {
			branch = x.TrueBranch
		}
		m.tasks = append(m.tasks, task{op: opEval, n: branch, depth: t.depth + 1, cd: t.cd, env: t.env})
	case opCallBody:
		x := t.n.(*UserCall)
		var env []any
		if n := len(x.Arguments); n > 0 {
			env = make([]any, n)
			copy(env, m.pop(n))
		}
		m.tasks = append(m.tasks, task{op: opEval, n: x.def.Body, depth: 2, cd: t.cd + 1, env: env})
	case opTool:
		x := t.n.(*ToolCall)
		vals := m.pop(len(x.Arguments))
		args := make(map[string]any, len(vals))
		for i, v := range vals {
			args[x.ArgNames[i]] = v
		}
		v, err := m.tool(ctx, x, args, int(t.depth), int(t.visit))
		if err != nil {
			return err
		}
		m.push(v)
	case opMemoStore:
		e := m.held[len(m.held)-1]
		e.value, e.done = m.vals[len(m.vals)-1], true
		m.unlock(e)
	case opExit:
		v := m.vals[len(m.vals)-1]
		if err := r.tr.Emit(ctx, &tracer.Event{Kind: tracer.NodeExit, Site: m.site(t.n, t.visit), Node: t.n.Kind().String(), Branch: m.branch,
			Depth: int(t.depth), Output: v, HasOutput: true}); err != nil {
			return err
		}
	}
	m.steps++
	if m.steps&255 == 0 {
		// Cooperative yield point, as upstream: a tool-free infinite
		// recursion still sees cancellation and deadlines.
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
	}
	return nil
}

// isLeaf reports whether n is evaluated in no time (a literal or a
// variable): tracing reports it with a node.exit only.
func isLeaf(n Node) bool {
	switch n.(type) {
	case *Literal, *Variable:
		return true
	}
	return false
}

// site identifies a node instance in this branch: the path plus
// [branch, visit], where visit counts earlier evaluations of the same
// tool call in this branch (sequential, so deterministic).
func (m *machine) site(n Node, visit int32) tracer.Site {
	s := tracer.Site{Path: n.Path()}
	if _, ok := n.(*ToolCall); ok {
		s.Iter = []int{max(m.branch, 0), int(visit)}
	}
	return s
}

func (m *machine) tool(ctx context.Context, x *ToolCall, args map[string]any, depth, visit int) (any, error) {
	r := m.r
	name := strings.TrimPrefix(x.Tool, "functions.")
	def, err := r.prov.Tool(ctx, name)
	if err != nil {
		return nil, err
	}
	if def == nil {
		return nil, Errorf(ProviderResponseError, "Tool definition must be a mapping")
	}
	if err := def.ValidateArguments(args); err != nil {
		return nil, err
	}
	return r.invoke(ctx, m.sc, x.path, []int{max(m.branch, 0), visit}, name, args, depth)
}

func (m *machine) lockMemo(ctx context.Context, x *Memo) (*memoEntry, error) {
	r := m.r
	r.memoMu.Lock()
	e, ok := r.memos[x.Key]
	if !ok {
		e = &memoEntry{lock: make(chan struct{}, 1)}
		r.memos[x.Key] = e
	}
	r.memoMu.Unlock()
	for _, h := range m.held {
		if h == e {
			return nil, Errorf(ValueError, "Memo key '%s' is re-entered while it is being evaluated", x.Key)
		}
	}
	locked := false
	tryLock := func() bool {
		select {
		case e.lock <- struct{}{}:
			locked = true
			return true
		default:
			return false
		}
	}
	switch {
	case tryLock():
	case r.sched != nil:
		r.sched.Await(func() bool { return tryLock() || ctx.Err() != nil })
	default:
		select {
		case e.lock <- struct{}{}:
			locked = true
		case <-ctx.Done():
		}
	}
	if !locked {
		return nil, ctx.Err()
	}
	e.owner = m
	m.held = append(m.held, e)
	return e, nil
}

func (m *machine) unlock(e *memoEntry) {
	m.held = m.held[:len(m.held)-1]
	e.owner = nil
	<-e.lock
}
