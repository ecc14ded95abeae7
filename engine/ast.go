package engine

import (
	"iter"
	"strconv"
)

// NodeKind is the type of an AST node, spelled as in the JSON "type" field.
type NodeKind uint8

// Node kinds of schema 1.0 and 2.0.
const (
	KindProgram NodeKind = iota + 1
	KindFunction
	KindValue
	KindConditional
	KindLambda
	KindMap
	KindFilter
	KindReduce
	KindDefinition
	KindLiteral
	KindVariable
	KindCall
	KindToolCall
	KindMemo
)

var nodeKindNames = [...]string{
	KindProgram: "program", KindFunction: "function", KindValue: "value",
	KindConditional: "conditional", KindLambda: "lambda", KindMap: "map",
	KindFilter: "filter", KindReduce: "reduce", KindDefinition: "function_definition",
	KindLiteral: "literal", KindVariable: "variable", KindCall: "call",
	KindToolCall: "tool_call", KindMemo: "memo",
}

// String returns the JSON type name of the kind.
func (k NodeKind) String() string {
	if int(k) < len(nodeKindNames) && nodeKindNames[k] != "" {
		return nodeKindNames[k]
	}
	return "node(" + strconv.Itoa(int(k)) + ")"
}

// Node is one node of a Treelang AST. The set of node types is closed.
// Every node knows its JSON path from the program root.
type Node interface {
	Kind() NodeKind
	Path() string
	node()
}

type base struct {
	path string
	id   int32 // pre-order index, unique within a program
}

func (b *base) Path() string { return b.path }
func (*base) node()          {}

// Program is a program node: the root of every program, and in schema 1.0
// also an ordinary nested node.
type Program struct {
	base
	Version     string // "1.0" or "2.0"
	Mode        string // "single" or "parallel"
	Name        *string
	Description *string
	Body        []Node
	Definitions []*Definition // schema 2.0 only
	defIndex    map[string]*Definition
	nodeCount   int
	raw         []byte
}

// Kind returns KindProgram.
func (*Program) Kind() NodeKind { return KindProgram }

// NodeCount is the number of nodes in the program, itself included.
func (p *Program) NodeCount() int { return p.nodeCount }

// Source returns the JSON the program was parsed from, if any.
func (p *Program) Source() []byte { return p.raw }

// Function is a schema 1.0 tool call with positional params.
type Function struct {
	base
	Name   string
	Params []Node
}

// Kind returns KindFunction.
func (*Function) Kind() NodeKind { return KindFunction }

// Value is a schema 1.0 literal or placeholder leaf.
type Value struct {
	base
	Name  string
	Value any
}

// Kind returns KindValue.
func (*Value) Kind() NodeKind { return KindValue }

// Conditional evaluates Condition and then only the selected branch. In
// schema 1.0 FalseBranch may be nil; in 2.0 it is required.
type Conditional struct {
	base
	Condition   Node
	TrueBranch  Node
	FalseBranch Node
}

// Kind returns KindConditional.
func (*Conditional) Kind() NodeKind { return KindConditional }

// Lambda is a schema 1.0 function literal whose body is one function node.
type Lambda struct {
	base
	Params []string
	Body   *Function
}

// Kind returns KindLambda.
func (*Lambda) Kind() NodeKind { return KindLambda }

// HigherOrder is a schema 1.0 map, filter or reduce node.
type HigherOrder struct {
	base
	kind     NodeKind
	Function *Lambda
	Iterable Node
}

// Kind returns KindMap, KindFilter or KindReduce.
func (h *HigherOrder) Kind() NodeKind { return h.kind }

// Definition is a schema 2.0 user function.
type Definition struct {
	base
	Name   string
	Params []string
	Body   Node
}

// Kind returns KindDefinition.
func (*Definition) Kind() NodeKind { return KindDefinition }

// Literal is a schema 2.0 constant.
type Literal struct {
	base
	Value any
}

// Kind returns KindLiteral.
func (*Literal) Kind() NodeKind { return KindLiteral }

// Variable is a schema 2.0 reference to a parameter of the enclosing
// definition.
type Variable struct {
	base
	Name string
	slot int
}

// Kind returns KindVariable.
func (*Variable) Kind() NodeKind { return KindVariable }

// UserCall is a schema 2.0 call of a user function with positional arguments.
type UserCall struct {
	base
	Function  string
	Arguments []Node
	def       *Definition
}

// Kind returns KindCall.
func (*UserCall) Kind() NodeKind { return KindCall }

// ToolCall is a schema 2.0 tool call with named arguments, kept in the
// order the JSON object listed them (they are evaluated in that order).
type ToolCall struct {
	base
	Tool      string
	ArgNames  []string
	Arguments []Node
}

// Kind returns KindToolCall.
func (*ToolCall) Kind() NodeKind { return KindToolCall }

// Memo caches the value of a closed expression under Key for one run.
type Memo struct {
	base
	Key        string
	Expression Node
	canonical  string
}

// Kind returns KindMemo.
func (*Memo) Kind() NodeKind { return KindMemo }

// Children returns the direct children of n in evaluation (pre-order)
// order.
func Children(n Node) []Node {
	switch x := n.(type) {
	case *Program:
		out := make([]Node, 0, len(x.Definitions)+len(x.Body))
		for _, d := range x.Definitions {
			out = append(out, d)
		}
		return append(out, x.Body...)
	case *Function:
		return x.Params
	case *Conditional:
		if x.FalseBranch != nil {
			return []Node{x.Condition, x.TrueBranch, x.FalseBranch}
		}
		return []Node{x.Condition, x.TrueBranch}
	case *Lambda:
		return []Node{x.Body}
	case *HigherOrder:
		return []Node{x.Function, x.Iterable}
	case *Definition:
		return []Node{x.Body}
	case *UserCall:
		return x.Arguments
	case *ToolCall:
		return x.Arguments
	case *Memo:
		return []Node{x.Expression}
	}
	return nil
}

// All iterates over n and its descendants in pre-order with their depth
// (n itself at depth 0). It uses an explicit stack, so any nesting depth
// is safe.
func All(n Node) iter.Seq2[Node, int] {
	return func(yield func(Node, int) bool) {
		type item struct {
			n Node
			d int
		}
		stack := []item{{n, 0}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !yield(it.n, it.d) {
				return
			}
			kids := Children(it.n)
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, item{kids[i], it.d + 1})
			}
		}
	}
}

// Walk calls f for n and its descendants in pre-order; when f returns
// false the node's children are skipped.
func Walk(n Node, f func(Node) bool) {
	stack := []Node{n}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !f(cur) {
			continue
		}
		kids := Children(cur)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
}
