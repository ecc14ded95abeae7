package engine

import (
	"context"
	"strings"
	"time"

	"github.com/treelang/treelang/tracer"
)

// scope is the immutable evaluation context of schema 1.0 nodes: lambda
// bindings, the iteration indices of enclosing map/filter/reduce, whether
// a concurrency permit is held, and the body branch.
type scope struct {
	bind   *binding
	iter   []int
	permit bool
	branch int
}

type binding struct {
	name  string
	value any
	next  *binding
}

func (sc *scope) lookup(name string) (any, bool) {
	for b := sc.bind; b != nil; b = b.next {
		if b.name == name {
			return b.value, true
		}
	}
	return nil, false
}

// Closure is the value of a lambda evaluated outside map, filter or
// reduce. It has no JSON form.
type Closure struct {
	Lambda *Lambda
}

// eval evaluates one schema 1.0 node at the given structural depth.
// Branch goroutines start with a small stack, so the untraced path keeps
// its frame small; events are built in evalTraced.
func (r *run) eval(ctx context.Context, n Node, depth int, sc *scope) (any, error) {
	if err := r.count(ctx, depth, n.Path(), sc.iter, sc.branch); err != nil {
		return nil, err
	}
	if r.tr != nil {
		return r.evalTraced(ctx, n, depth, sc)
	}
	v, err := r.evalNode(ctx, n, depth, sc)
	if err != nil {
		return nil, at(err, n.Path())
	}
	return v, nil
}

func (r *run) evalTraced(ctx context.Context, n Node, depth int, sc *scope) (any, error) {
	site := tracer.Site{Path: n.Path(), Iter: sc.iter}
	_, leaf := n.(*Value)
	var start time.Time
	if !leaf {
		// A leaf is evaluated in no time: its node.exit alone reports it.
		enter := r.newEvent()
		*enter = tracer.Event{Kind: tracer.NodeEnter, Site: site, Node: n.Kind().String(), Branch: sc.branch, Depth: depth}
		if err := r.tr.Emit(ctx, enter); err != nil {
			return nil, err
		}
		start = enter.Time // stamped by the tracer; read only
	}
	v, err := r.evalNode(ctx, n, depth, sc)
	ev := r.newEvent()
	*ev = tracer.Event{Kind: tracer.NodeExit, Site: site, Node: n.Kind().String(), Branch: sc.branch, Depth: depth}
	if !leaf {
		now := r.clock.Now()
		ev.Duration = now.Sub(start)
		if r.realTime {
			ev.Time = now
		}
	}
	if err != nil {
		err = at(err, n.Path())
		ev.Error = errorInfo(err)
	} else {
		ev.Output, ev.HasOutput = v, true
	}
	if eerr := r.tr.Emit(r.emitCtx(ctx), ev); eerr != nil && err == nil {
		return nil, eerr
	}
	return v, err
}

// value evaluates a value node untraced: a binding or the literal.
func (r *run) value(ctx context.Context, x *Value, depth int, sc *scope) (any, error) {
	if err := r.count(ctx, depth, x.path, sc.iter, sc.branch); err != nil {
		return nil, err
	}
	if v, ok := sc.lookup(x.Name); ok {
		return v, nil
	}
	return x.Value, nil
}

func (r *run) evalNode(ctx context.Context, n Node, depth int, sc *scope) (any, error) {
	switch x := n.(type) {
	case *Value:
		if v, ok := sc.lookup(x.Name); ok {
			return v, nil
		}
		return x.Value, nil
	case *Function:
		return r.function(ctx, x, depth, sc)
	case *Conditional:
		c, err := r.eval(ctx, x.Condition, depth+1, sc)
		if err != nil {
			return nil, err
		}
		if Truthy(c) {
			return r.eval(ctx, x.TrueBranch, depth+1, sc)
		}
		if x.FalseBranch != nil {
			return r.eval(ctx, x.FalseBranch, depth+1, sc)
		}
		return nil, nil
	case *Lambda:
		return &Closure{Lambda: x}, nil
	case *HigherOrder:
		return r.higherOrder(ctx, x, depth, sc)
	case *Program:
		root := x == r.prog
		return r.body(ctx, x, sc, root, func(ctx context.Context, sc *scope, i int) (any, error) {
			return r.eval(ctx, x.Body[i], depth+1, sc)
		})
	}
	return nil, Errorf(ValueError, "cannot evaluate %s node in schema 1.0", n.Kind())
}

// function evaluates a schema 1.0 tool call (reference §2.4 "function").
func (r *run) function(ctx context.Context, x *Function, depth int, sc *scope) (any, error) {
	name := strings.TrimPrefix(x.Name, "functions.")
	def, err := r.prov.Tool(ctx, name)
	if err != nil {
		return nil, err
	}
	if def == nil {
		return nil, notAvailable(name)
	}
	props := def.PropertyNames()
	if (def.InputSchema == nil && len(x.Params) != len(props)) || len(x.Params) > len(props) {
		return nil, arityError(name, def, len(props), len(x.Params))
	}
	var args map[string]any
	if len(x.Params) == 1 && (r.sem == nil || sc.permit) {
		// A single param needs no sibling machinery (under
		// max_concurrency it still takes a permit at the outermost level).
		var v any
		var err error
		if val, ok := x.Params[0].(*Value); ok && r.tr == nil {
			v, err = r.value(ctx, val, depth+1, sc) // the common leaf, without eval's frames
		} else {
			v, err = r.eval(ctx, x.Params[0], depth+1, sc)
		}
		if err != nil {
			return nil, err
		}
		args = map[string]any{props[0]: v}
	} else {
		var err error
		if args, err = r.params(ctx, x, props, depth, sc); err != nil {
			return nil, err
		}
	}
	if err := def.ValidateArguments(args); err != nil {
		return nil, err
	}
	return r.invoke(ctx, sc, x.path, sc.iter, name, args, depth)
}

// The errors of function are built out of line: its frame stays small
// for the goroutines of parallel branches.

func notAvailable(name string) error {
	return Errorf(ProviderResponseError, "Tool %s is not available", name)
}

func arityError(name string, def *ToolDefinition, want, got int) error {
	if def.InputSchema == nil && got != want {
		return Errorf(ASTValidationError, "Function '%s' expects %d parameters, got %d", name, want, got)
	}
	return Errorf(ASTValidationError, "Function '%s' accepts at most %d parameters, got %d", name, want, got)
}

// params evaluates several function params as sibling operations and
// pairs them with the property names.
func (r *run) params(ctx context.Context, x *Function, props []string, depth int, sc *scope) (map[string]any, error) {
	vals, err := r.siblings(ctx, sc, len(x.Params), func(i int) bool { return isSimple(x.Params[i]) },
		func(ctx context.Context, sc *scope, i int) (any, error) {
			return r.eval(ctx, x.Params[i], depth+1, sc)
		})
	if err != nil {
		return nil, err
	}
	args := make(map[string]any, len(vals))
	for i, v := range vals {
		args[props[i]] = v
	}
	return args, nil
}

func (r *run) higherOrder(ctx context.Context, x *HigherOrder, depth int, sc *scope) (any, error) {
	it, err := r.eval(ctx, x.Iterable, depth+1, sc)
	if err != nil {
		return nil, err
	}
	items, ok := it.([]any)
	if !ok {
		what := map[NodeKind]string{KindMap: "Map", KindFilter: "Filter", KindReduce: "Reduce"}[x.kind]
		return nil, Errorf(TypeError, "%s expects an iterable (list) as input", what)
	}
	lam := x.Function
	if x.kind == KindReduce && len(items) == 0 {
		return nil, nil
	}
	var acc any
	first := 0
	if x.kind == KindReduce {
		init := reduceInitial(lam, sc)
		if init == nil {
			acc, first = items[0], 1
		} else {
			acc = init
		}
	}
	// The lambda node itself counts once.
	if _, err := r.eval(ctx, lam, depth+1, sc); err != nil {
		return nil, err
	}
	bodyDepth := depth + 2
	// One allocation per item holds the item's scope, its bindings and its
	// iteration indices.
	type frame struct {
		sc   scope
		b    [2]binding
		iter [4]int
	}
	call := func(i int, names []string, values ...any) (any, error) {
		f := &frame{}
		next := sc.bind
		for k := len(names) - 1; k >= 0; k-- {
			f.b[k] = binding{name: names[k], value: values[k], next: next}
			next = &f.b[k]
		}
		var iter []int
		if n := len(sc.iter) + 1; n <= len(f.iter) {
			iter = f.iter[:n]
		} else {
			iter = make([]int, n)
		}
		copy(iter, sc.iter)
		iter[len(sc.iter)] = i
		f.sc = scope{bind: next, iter: iter, permit: sc.permit, branch: sc.branch}
		return r.eval(ctx, lam.Body, bodyDepth, &f.sc)
	}
	one := lam.Params[:1]
	switch x.kind {
	case KindMap:
		out := make([]any, len(items))
		for i, item := range items {
			v, err := call(i, one, item)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case KindFilter:
		out := make([]any, 0, len(items))
		for i, item := range items {
			v, err := call(i, one, item)
			if err != nil {
				return nil, err
			}
			if Truthy(v) {
				out = append(out, item)
			}
		}
		return out, nil
	}
	for i := first; i < len(items); i++ {
		v, err := call(i, lam.Params[:2], acc, items[i])
		if err != nil {
			return nil, err
		}
		acc = v
	}
	return acc, nil
}

// reduceInitial finds the accumulator placeholder (the first value node
// named params[0] in pre-order over the lambda body) and resolves it with
// the current bindings. It counts no node.
func reduceInitial(lam *Lambda, sc *scope) any {
	var found *Value
	Walk(lam.Body, func(n Node) bool {
		if found != nil {
			return false
		}
		if v, ok := n.(*Value); ok && v.Name == lam.Params[0] {
			found = v
		}
		return found == nil
	})
	if found == nil {
		return nil
	}
	if v, ok := sc.lookup(found.Name); ok {
		return v
	}
	return found.Value
}
