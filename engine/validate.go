package engine

import (
	"fmt"
	"sort"
	"strings"
)

func ruleError(path, format string, args ...any) error {
	loc := path
	if loc == "" {
		loc = "/"
	}
	return &Error{Type: ValueError, Path: path, Message: "Failed to parse AST: " + loc + ": " + fmt.Sprintf(format, args...)}
}

// validateV1 applies the program-level rules of schema 1.0 (reference
// §1.2) in pre-order and reports the first violation.
func validateV1(n Node, toolParams map[string][]string) error {
	var err error
	Walk(n, func(n Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *Function:
			if names, ok := toolParams[x.Name]; ok && len(names) != len(x.Params) {
				err = ruleError(x.path, "Function '%s' expects %d positional params (%s), got %d.", x.Name, len(names), PyRepr(names), len(x.Params))
			}
		case *HigherOrder:
			want, what := 1, "Map"
			switch x.kind {
			case KindFilter:
				what = "Filter"
			case KindReduce:
				want, what = 2, "Reduce"
			}
			if len(x.Function.Params) != want {
				plural := "param"
				if want > 1 {
					plural = "params"
				}
				err = ruleError(x.path, "%s lambda must declare exactly %d %s.", what, want, plural)
			}
		case *Lambda:
			err = checkLambda(x)
		}
		return err == nil
	})
	return err
}

func checkLambda(l *Lambda) error {
	seen := map[string]bool{}
	for _, p := range l.Params {
		if seen[p] {
			return ruleError(l.path, "Lambda parameter names must be unique.")
		}
		seen[p] = true
	}
	values := lambdaValues(l.Body)
	named := map[string]bool{}
	var invalid []string
	for _, v := range values {
		named[v.Name] = true
		if v.Value == nil && !seen[v.Name] {
			invalid = append(invalid, v.Name)
		}
	}
	var missing []string
	for _, p := range l.Params {
		if !named[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(invalid)
	invalid = dedupe(invalid)
	if len(missing) == 0 && len(invalid) == 0 {
		return nil
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "params "+PyRepr(missing)+" are not referenced by name in the body")
	}
	if len(invalid) > 0 {
		parts = append(parts, "null placeholders "+PyRepr(invalid)+" do not match a lambda param")
	}
	return ruleError(l.path, "Invalid lambda binding: %s.", strings.Join(parts, "; "))
}

// lambdaValues collects the value nodes of a lambda body reachable through
// function params, conditional parts and the iterables of nested
// map/filter/reduce, without entering nested lambdas or programs.
func lambdaValues(body Node) []*Value {
	var out []*Value
	var visit func(n Node)
	visit = func(n Node) {
		switch x := n.(type) {
		case *Value:
			out = append(out, x)
		case *Function:
			for _, p := range x.Params {
				visit(p)
			}
		case *Conditional:
			visit(x.Condition)
			visit(x.TrueBranch)
			if x.FalseBranch != nil {
				visit(x.FalseBranch)
			}
		case *HigherOrder:
			visit(x.Iterable)
		}
	}
	if body != nil {
		visit(body)
	}
	return out
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// validateV2 applies the static rules of schema 2.0 (reference §3.2) and
// resolves variables to parameter slots and calls to their definitions.
func validateV2(prog *Program) error {
	prog.defIndex = make(map[string]*Definition, len(prog.Definitions))
	for _, d := range prog.Definitions {
		if _, dup := prog.defIndex[d.Name]; dup {
			return ruleError(d.path, "Function definition '%s' must be unique.", d.Name)
		}
		prog.defIndex[d.Name] = d
	}
	v := &v2validator{prog: prog, memos: map[string]string{}}
	for _, d := range prog.Definitions {
		if err := v.expr(d.Body, d.Params); err != nil {
			return err
		}
	}
	for _, e := range prog.Body {
		if err := v.expr(e, nil); err != nil {
			return err
		}
	}
	return nil
}

type v2validator struct {
	prog  *Program
	memos map[string]string
}

func (v *v2validator) expr(n Node, scope []string) error {
	switch x := n.(type) {
	case *Literal:
		return nil
	case *Variable:
		for i, s := range scope {
			if s == x.Name {
				x.slot = i
				return nil
			}
		}
		return ruleError(x.path, "Unbound variable '%s'.", x.Name)
	case *UserCall:
		def, ok := v.prog.defIndex[x.Function]
		if !ok {
			return ruleError(x.path, "Unknown user function '%s'.", x.Function)
		}
		if len(def.Params) != len(x.Arguments) {
			return ruleError(x.path, "Function '%s' expects %d arguments, got %d.", x.Function, len(def.Params), len(x.Arguments))
		}
		x.def = def
		for _, a := range x.Arguments {
			if err := v.expr(a, scope); err != nil {
				return err
			}
		}
	case *ToolCall:
		for _, a := range x.Arguments {
			if err := v.expr(a, scope); err != nil {
				return err
			}
		}
	case *Conditional:
		for _, c := range []Node{x.Condition, x.TrueBranch, x.FalseBranch} {
			if err := v.expr(c, scope); err != nil {
				return err
			}
		}
	case *Memo:
		closed := true
		Walk(x.Expression, func(n Node) bool {
			if _, ok := n.(*Variable); ok {
				closed = false
			}
			return closed
		})
		if !closed {
			return ruleError(x.path, "Memoized expressions must be closed.")
		}
		if prev, ok := v.memos[x.Key]; ok && prev != x.canonical {
			return ruleError(x.path, "Memo key '%s' identifies different expressions.", x.Key)
		}
		v.memos[x.Key] = x.canonical
		return v.expr(x.Expression, nil)
	}
	return nil
}
