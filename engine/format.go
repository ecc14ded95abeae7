package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// MarshalProgram writes a parsed program as the Python CLI's validate
// does: indented JSON in schema field order, null optional fields left
// out. Unlike upstream (gap G8), the required "value" of value and
// literal nodes is kept even when null, so the output validates again.
func MarshalProgram(n Node) []byte {
	var b bytes.Buffer
	writeNode(&b, n, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

type field struct {
	key string
	val func(b *bytes.Buffer, indent int)
}

func writeObject(b *bytes.Buffer, indent int, fields []field) {
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + strings.Repeat("  ", indent+1))
		writeJSON(b, f.key)
		b.WriteString(": ")
		f.val(b, indent+1)
	}
	b.WriteString("\n" + strings.Repeat("  ", indent) + "}")
}

func scalar(v any) func(b *bytes.Buffer, indent int) {
	return func(b *bytes.Buffer, indent int) { writeIndented(b, v, indent) }
}

func writeIndented(b *bytes.Buffer, v any, indent int) {
	data, err := EncodeValue(v)
	if err != nil {
		b.WriteString("null")
		return
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, strings.Repeat("  ", indent), "  "); err != nil {
		b.Write(data)
		return
	}
	b.Write(out.Bytes())
}

func nodeList(nodes []Node) func(b *bytes.Buffer, indent int) {
	return func(b *bytes.Buffer, indent int) {
		if len(nodes) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, n := range nodes {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + strings.Repeat("  ", indent+1))
			writeNode(b, n, indent+1)
		}
		b.WriteString("\n" + strings.Repeat("  ", indent) + "]")
	}
}

func nodeField(n Node) func(b *bytes.Buffer, indent int) {
	return func(b *bytes.Buffer, indent int) { writeNode(b, n, indent) }
}

func stringsValue(s []string) any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func writeNode(b *bytes.Buffer, n Node, indent int) {
	t := scalar(n.Kind().String())
	var fs []field
	switch x := n.(type) {
	case *Program:
		fs = []field{{"type", t}}
		if x.Version == "2.0" {
			defs := make([]Node, len(x.Definitions))
			for i, d := range x.Definitions {
				defs[i] = d
			}
			fs = append(fs, field{"definitions", nodeList(defs)})
		}
		fs = append(fs, field{"body", nodeList(x.Body)}, field{"mode", scalar(x.Mode)})
		if x.Name != nil {
			fs = append(fs, field{"name", scalar(*x.Name)})
		}
		if x.Description != nil {
			fs = append(fs, field{"description", scalar(*x.Description)})
		}
		fs = append(fs, field{"schema_version", scalar(x.Version)})
	case *Function:
		fs = []field{{"type", t}, {"name", scalar(x.Name)}, {"params", nodeList(x.Params)}}
	case *Value:
		fs = []field{{"type", t}, {"name", scalar(x.Name)}, {"value", scalar(x.Value)}}
	case *Conditional:
		fs = []field{{"type", t}, {"condition", nodeField(x.Condition)}, {"true_branch", nodeField(x.TrueBranch)}}
		if x.FalseBranch != nil {
			fs = append(fs, field{"false_branch", nodeField(x.FalseBranch)})
		}
	case *Lambda:
		fs = []field{{"type", t}, {"params", scalar(stringsValue(x.Params))}, {"body", nodeField(x.Body)}}
	case *HigherOrder:
		fs = []field{{"type", t}, {"function", nodeField(x.Function)}, {"iterable", nodeField(x.Iterable)}}
	case *Definition:
		fs = []field{{"type", t}, {"name", scalar(x.Name)}, {"params", scalar(stringsValue(x.Params))}, {"body", nodeField(x.Body)}}
	case *Literal:
		fs = []field{{"type", t}, {"value", scalar(x.Value)}}
	case *Variable:
		fs = []field{{"type", t}, {"name", scalar(x.Name)}}
	case *UserCall:
		fs = []field{{"type", t}, {"function", scalar(x.Function)}, {"arguments", nodeList(x.Arguments)}}
	case *ToolCall:
		args := func(b *bytes.Buffer, indent int) {
			fields := make([]field, len(x.ArgNames))
			for i, k := range x.ArgNames {
				fields[i] = field{k, nodeField(x.Arguments[i])}
			}
			if len(fields) == 0 {
				b.WriteString("{}")
				return
			}
			writeObject(b, indent, fields)
		}
		fs = []field{{"type", t}, {"tool", scalar(x.Tool)}, {"arguments", args}}
	case *Memo:
		fs = []field{{"type", t}, {"key", scalar(x.Key)}, {"expression", nodeField(x.Expression)}}
	}
	writeObject(b, indent, fs)
}

// OutlineNode is one line of a program outline, for tree views.
type OutlineNode struct {
	Path  string
	Type  string
	Label string
	Depth int
}

// Outline lists the program's nodes in pre-order with a short label each:
// the tool or function name, or the value.
func Outline(n Node) []OutlineNode {
	var out []OutlineNode
	for node, depth := range All(n) {
		out = append(out, OutlineNode{Path: node.Path(), Type: node.Kind().String(), Label: label(node), Depth: depth})
	}
	return out
}

func label(n Node) string {
	switch x := n.(type) {
	case *Program:
		s := x.Mode
		if x.Name != nil {
			s = *x.Name + " (" + x.Mode + ")"
		}
		return s
	case *Function:
		return x.Name
	case *Value:
		return x.Name + " = " + PyRepr(x.Value)
	case *Lambda:
		return "(" + strings.Join(x.Params, ", ") + ")"
	case *Definition:
		return x.Name + "(" + strings.Join(x.Params, ", ") + ")"
	case *Literal:
		return PyRepr(x.Value)
	case *Variable:
		return x.Name
	case *UserCall:
		return x.Function + "()"
	case *ToolCall:
		return x.Tool
	case *Memo:
		return x.Key
	}
	return ""
}

// FormatTree renders the inspect --format tree outline, as upstream:
// node type plus name, "= repr" for leaves, "key:" lines for lists with
// indexed children and "key: repr" for scalar fields.
func FormatTree(n Node) string {
	var b strings.Builder
	treeNode(&b, n, 0, "")
	return b.String()
}

func treeNode(b *strings.Builder, n Node, indent int, prefix string) {
	pad := strings.Repeat("  ", indent)
	head := n.Kind().String()
	switch x := n.(type) {
	case *Function:
		head += " " + x.Name
	case *Value:
		head += " " + x.Name + " = " + PyRepr(x.Value)
	case *Literal:
		head += " = " + PyRepr(x.Value)
	case *Variable:
		head += " " + x.Name
	case *UserCall:
		head += " " + x.Function
	case *ToolCall:
		head += " " + x.Tool
	case *Definition:
		head += " " + x.Name
	case *Memo:
		head += " " + x.Key
	}
	b.WriteString(pad + prefix + head + "\n")
	sub := func(key string, nodes []Node) {
		b.WriteString(pad + "  " + key + ":\n")
		for i, c := range nodes {
			treeNode(b, c, indent+2, strconv.Itoa(i)+": ")
		}
	}
	one := func(key string, c Node) {
		if c == nil {
			return
		}
		b.WriteString(pad + "  " + key + ":\n")
		treeNode(b, c, indent+2, "")
	}
	kv := func(key string, v any) { b.WriteString(pad + "  " + key + ": " + PyRepr(v) + "\n") }
	switch x := n.(type) {
	case *Program:
		if x.Version == "2.0" && len(x.Definitions) > 0 {
			defs := make([]Node, len(x.Definitions))
			for i, d := range x.Definitions {
				defs[i] = d
			}
			sub("definitions", defs)
		}
		sub("body", x.Body)
		kv("mode", x.Mode)
		if x.Name != nil {
			kv("name", *x.Name)
		}
		if x.Description != nil {
			kv("description", *x.Description)
		}
	case *Function:
		sub("params", x.Params)
	case *Conditional:
		one("condition", x.Condition)
		one("true_branch", x.TrueBranch)
		one("false_branch", x.FalseBranch)
	case *Lambda:
		kv("params", x.Params)
		one("body", x.Body)
	case *HigherOrder:
		one("function", x.Function)
		one("iterable", x.Iterable)
	case *Definition:
		kv("params", x.Params)
		one("body", x.Body)
	case *UserCall:
		sub("arguments", x.Arguments)
	case *ToolCall:
		for i, k := range x.ArgNames {
			one("arguments."+k, x.Arguments[i])
		}
	case *Memo:
		one("expression", x.Expression)
	}
}
