package engine

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParseOptions tune parsing.
type ParseOptions struct {
	// ToolParams, when set, maps tool names to their ordered parameter
	// names; schema 1.0 function nodes naming such a tool must pass exactly
	// that many params.
	ToolParams map[string][]string
}

// ParseProgram parses a Treelang program: schema 2.0 when the object's
// schema_version is "2.0", schema 1.0 otherwise, exactly as the Python
// library dispatches. Every failure is a ValueError whose message starts
// with "Failed to parse AST: " and names the JSON path of the node at
// fault; JSON syntax errors name the line and column.
func ParseProgram(data []byte) (*Program, error) {
	return ParseProgramWith(data, ParseOptions{})
}

// ParseProgramWith is ParseProgram with options.
func ParseProgramWith(data []byte, opts ParseOptions) (*Program, error) {
	root, err := decodeTree(data)
	if err != nil {
		return nil, err
	}
	if root.kind != 'o' {
		return nil, &Error{Type: ValueError, Message: "Program input must be a JSON object"}
	}
	p := &parser{}
	var prog *Program
	if sv, ok := root.get("schema_version"); ok && sv.kind == 's' && sv.s == "2.0" {
		prog = p.programV2(root)
	} else {
		prog = p.programV1(root, "", true)
	}
	if p.err != nil {
		return nil, p.err
	}
	if prog.Version == "2.0" {
		if err := validateV2(prog); err != nil {
			return nil, err
		}
	} else if err := validateV1(prog, opts.ToolParams); err != nil {
		return nil, err
	}
	prog.nodeCount = int(p.next)
	prog.raw = data
	return prog, nil
}

type parser struct {
	err  error
	next int32
}

func (p *parser) fail(path, format string, args ...any) {
	if p.err != nil {
		return
	}
	loc := path
	if loc == "" {
		loc = "/"
	}
	p.err = &Error{Type: ValueError, Path: path,
		Message: "Failed to parse AST: " + loc + ": " + fmt.Sprintf(format, args...)}
}

func (p *parser) base(path string) base {
	b := base{path: path, id: p.next}
	p.next++
	return b
}

func child(path, key string) string { return path + "/" + key }

func index(path, key string, i int) string { return path + "/" + key + "/" + strconv.Itoa(i) }

// fields checks that obj has only the allowed keys.
func (p *parser) fields(obj *jval, path string, allowed ...string) bool {
	for _, k := range obj.keys {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			p.fail(path, "extra field '%s' is not permitted", k)
			return false
		}
	}
	return true
}

func (p *parser) object(v *jval, path, what string) bool {
	if v.kind != 'o' {
		p.fail(path, "%s must be an object, got %s", what, v.typeName())
		return false
	}
	return true
}

// fixedType checks the optional "type" of a node whose class is fixed.
func (p *parser) fixedType(obj *jval, path, want string) bool {
	if t, ok := obj.get("type"); ok {
		if t.kind != 's' || t.s != want {
			p.fail(path, "type must be '%s'", want)
			return false
		}
	}
	return true
}

func (p *parser) requiredString(obj *jval, path, key string, minLen int) (string, bool) {
	v, ok := obj.get(key)
	if !ok {
		p.fail(path, "field '%s' is required", key)
		return "", false
	}
	if v.kind != 's' {
		p.fail(child(path, key), "must be a string, got %s", v.typeName())
		return "", false
	}
	if len(v.s) < minLen {
		p.fail(child(path, key), "must have at least %d character", minLen)
		return "", false
	}
	return v.s, true
}

func (p *parser) optionalString(obj *jval, path, key string) *string {
	v, ok := obj.get(key)
	if !ok || v.kind == 'z' {
		return nil
	}
	if v.kind != 's' {
		p.fail(child(path, key), "must be a string or null, got %s", v.typeName())
		return nil
	}
	s := v.s
	return &s
}

func (p *parser) array(obj *jval, path, key string, required bool) ([]*jval, bool) {
	v, ok := obj.get(key)
	if !ok {
		if required {
			p.fail(path, "field '%s' is required", key)
			return nil, false
		}
		return nil, true
	}
	if v.kind != 'a' {
		p.fail(child(path, key), "must be an array, got %s", v.typeName())
		return nil, false
	}
	return v.arr, true
}

func (p *parser) mode(obj *jval, path string, required bool) string {
	v, ok := obj.get("mode")
	if !ok {
		if required {
			p.fail(path, "field 'mode' is required")
		}
		return "single"
	}
	if v.kind != 's' || (v.s != "single" && v.s != "parallel") {
		p.fail(child(path, "mode"), "mode must be 'single' or 'parallel'")
		return ""
	}
	return v.s
}

// ---- schema 1.0 ----

var v1Types = map[string]bool{"program": true, "function": true, "value": true, "conditional": true,
	"lambda": true, "map": true, "filter": true, "reduce": true}

func (p *parser) nodeV1(v *jval, path string) Node {
	if p.err != nil {
		return nil
	}
	if !p.object(v, path, "node") {
		return nil
	}
	t, ok := v.get("type")
	if !ok {
		p.fail(path, "field 'type' is required")
		return nil
	}
	if t.kind != 's' || !v1Types[t.s] {
		p.fail(child(path, "type"), "unknown node type %s", reprJ(t))
		return nil
	}
	switch t.s {
	case "program":
		return p.programV1(v, path, false)
	case "function":
		return p.functionV1(v, path)
	case "value":
		if !p.fields(v, path, "type", "name", "value") {
			return nil
		}
		b := p.base(path)
		name, ok := p.requiredString(v, path, "name", 1)
		if !ok {
			return nil
		}
		val, ok := v.get("value")
		if !ok {
			p.fail(path, "field 'value' is required")
			return nil
		}
		return &Value{base: b, Name: name, Value: val.value()}
	case "conditional":
		if !p.fields(v, path, "type", "condition", "true_branch", "false_branch") {
			return nil
		}
		n := &Conditional{base: p.base(path)}
		for _, k := range []string{"condition", "true_branch"} {
			if _, ok := v.get(k); !ok {
				p.fail(path, "field '%s' is required", k)
				return nil
			}
		}
		c, _ := v.get("condition")
		n.Condition = p.nodeV1(c, child(path, "condition"))
		tb, _ := v.get("true_branch")
		n.TrueBranch = p.nodeV1(tb, child(path, "true_branch"))
		if fb, ok := v.get("false_branch"); ok && fb.kind != 'z' {
			n.FalseBranch = p.nodeV1(fb, child(path, "false_branch"))
		}
		return n
	case "lambda":
		return p.lambdaV1(v, path)
	}
	// map, filter, reduce
	if !p.fields(v, path, "type", "function", "iterable") {
		return nil
	}
	kind := map[string]NodeKind{"map": KindMap, "filter": KindFilter, "reduce": KindReduce}[t.s]
	n := &HigherOrder{base: p.base(path), kind: kind}
	fn, ok := v.get("function")
	if !ok {
		p.fail(path, "field 'function' is required")
		return nil
	}
	it, ok := v.get("iterable")
	if !ok {
		p.fail(path, "field 'iterable' is required")
		return nil
	}
	n.Function = p.lambdaV1(fn, child(path, "function"))
	n.Iterable = p.nodeV1(it, child(path, "iterable"))
	return n
}

func (p *parser) programV1(v *jval, path string, root bool) *Program {
	if !p.fields(v, path, "type", "body", "mode", "name", "description", "schema_version") {
		return &Program{}
	}
	if root && !p.fixedType(v, path, "program") {
		return &Program{}
	}
	if sv, ok := v.get("schema_version"); ok && (sv.kind != 's' || sv.s != "1.0") {
		p.fail(child(path, "schema_version"), "schema_version must be '1.0' (or \"2.0\" for schema 2.0), got %s", reprJ(sv))
		return &Program{}
	}
	prog := &Program{base: p.base(path), Version: "1.0"}
	items, ok := p.array(v, path, "body", true)
	if !ok {
		return prog
	}
	prog.Mode = p.mode(v, path, true)
	prog.Name = p.optionalString(v, path, "name")
	prog.Description = p.optionalString(v, path, "description")
	prog.Body = make([]Node, len(items))
	for i, it := range items {
		prog.Body[i] = p.nodeV1(it, index(path, "body", i))
	}
	return prog
}

func (p *parser) functionV1(v *jval, path string) *Function {
	if !p.object(v, path, "function") || !p.fields(v, path, "type", "name", "params") || !p.fixedType(v, path, "function") {
		return nil
	}
	n := &Function{base: p.base(path)}
	name, ok := p.requiredString(v, path, "name", 1)
	if !ok {
		return nil
	}
	n.Name = name
	params, ok := p.array(v, path, "params", true)
	if !ok {
		return nil
	}
	n.Params = make([]Node, len(params))
	for i, it := range params {
		n.Params[i] = p.nodeV1(it, index(path, "params", i))
	}
	return n
}

func (p *parser) lambdaV1(v *jval, path string) *Lambda {
	if !p.object(v, path, "lambda") || !p.fields(v, path, "type", "params", "body") || !p.fixedType(v, path, "lambda") {
		return nil
	}
	n := &Lambda{base: p.base(path)}
	params, ok := p.array(v, path, "params", true)
	if !ok {
		return nil
	}
	for i, it := range params {
		if it.kind != 's' {
			p.fail(index(path, "params", i), "lambda params must be strings, got %s", it.typeName())
			return nil
		}
		n.Params = append(n.Params, it.s)
	}
	body, ok := v.get("body")
	if !ok {
		p.fail(path, "field 'body' is required")
		return nil
	}
	n.Body = p.functionV1(body, child(path, "body"))
	return n
}

// ---- schema 2.0 ----

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p *parser) ident(obj *jval, path, key string) (string, bool) {
	s, ok := p.requiredString(obj, path, key, 1)
	if !ok {
		return "", false
	}
	if !identRe.MatchString(s) {
		p.fail(child(path, key), "%s is not a valid identifier", pyQuote(s))
		return "", false
	}
	return s, true
}

func (p *parser) programV2(v *jval) *Program {
	path := ""
	if !p.fields(v, path, "type", "definitions", "body", "mode", "name", "description", "schema_version") || !p.fixedType(v, path, "program") {
		return &Program{}
	}
	prog := &Program{base: p.base(path), Version: "2.0"}
	prog.Mode = p.mode(v, path, false)
	prog.Name = p.optionalString(v, path, "name")
	prog.Description = p.optionalString(v, path, "description")
	defs, ok := p.array(v, path, "definitions", false)
	if !ok {
		return prog
	}
	for i, d := range defs {
		dp := index(path, "definitions", i)
		if !p.object(d, dp, "function_definition") || !p.fields(d, dp, "type", "name", "params", "body") || !p.fixedType(d, dp, "function_definition") {
			return prog
		}
		def := &Definition{base: p.base(dp)}
		if def.Name, ok = p.ident(d, dp, "name"); !ok {
			return prog
		}
		params, ok := p.array(d, dp, "params", false)
		if !ok {
			return prog
		}
		seen := map[string]bool{}
		for j, pv := range params {
			if pv.kind != 's' || !identRe.MatchString(pv.s) {
				p.fail(index(dp, "params", j), "parameter names must be identifiers")
				return prog
			}
			if seen[pv.s] {
				p.fail(dp, "Function '%s' parameter names must be unique.", def.Name)
				return prog
			}
			seen[pv.s] = true
			def.Params = append(def.Params, pv.s)
		}
		body, ok := d.get("body")
		if !ok {
			p.fail(dp, "field 'body' is required")
			return prog
		}
		def.Body = p.exprV2(body, child(dp, "body"))
		prog.Definitions = append(prog.Definitions, def)
	}
	body, ok := p.array(v, path, "body", true)
	if !ok {
		return prog
	}
	if len(body) == 0 {
		p.fail(child(path, "body"), "body must have at least 1 item")
		return prog
	}
	for i, e := range body {
		prog.Body = append(prog.Body, p.exprV2(e, index(path, "body", i)))
	}
	return prog
}

var v2Types = map[string]bool{"literal": true, "variable": true, "call": true, "tool_call": true, "conditional": true, "memo": true}

func (p *parser) exprV2(v *jval, path string) Node {
	if p.err != nil {
		return nil
	}
	if !p.object(v, path, "expression") {
		return nil
	}
	t, ok := v.get("type")
	if !ok {
		p.fail(path, "field 'type' is required")
		return nil
	}
	if t.kind != 's' || !v2Types[t.s] {
		p.fail(child(path, "type"), "unknown expression type %s", reprJ(t))
		return nil
	}
	switch t.s {
	case "literal":
		if !p.fields(v, path, "type", "value") {
			return nil
		}
		val, ok := v.get("value")
		if !ok {
			p.fail(path, "field 'value' is required")
			return nil
		}
		return &Literal{base: p.base(path), Value: val.value()}
	case "variable":
		if !p.fields(v, path, "type", "name") {
			return nil
		}
		b := p.base(path)
		name, ok := p.ident(v, path, "name")
		if !ok {
			return nil
		}
		return &Variable{base: b, Name: name}
	case "call":
		if !p.fields(v, path, "type", "function", "arguments") {
			return nil
		}
		n := &UserCall{base: p.base(path)}
		if n.Function, ok = p.ident(v, path, "function"); !ok {
			return nil
		}
		args, ok := p.array(v, path, "arguments", false)
		if !ok {
			return nil
		}
		for i, a := range args {
			n.Arguments = append(n.Arguments, p.exprV2(a, index(path, "arguments", i)))
		}
		return n
	case "tool_call":
		if !p.fields(v, path, "type", "tool", "arguments") {
			return nil
		}
		n := &ToolCall{base: p.base(path)}
		if n.Tool, ok = p.ident(v, path, "tool"); !ok {
			return nil
		}
		if args, ok := v.get("arguments"); ok {
			if args.kind != 'o' {
				p.fail(child(path, "arguments"), "must be an object, got %s", args.typeName())
				return nil
			}
			for i, k := range args.keys {
				if !identRe.MatchString(k) {
					p.fail(child(path, "arguments"), "argument name %s is not a valid identifier", pyQuote(k))
					return nil
				}
				n.ArgNames = append(n.ArgNames, k)
				n.Arguments = append(n.Arguments, p.exprV2(args.vals[i], child(child(path, "arguments"), k)))
			}
		}
		return n
	case "conditional":
		if !p.fields(v, path, "type", "condition", "true_branch", "false_branch") {
			return nil
		}
		n := &Conditional{base: p.base(path)}
		parts := []*Node{&n.Condition, &n.TrueBranch, &n.FalseBranch}
		for i, k := range []string{"condition", "true_branch", "false_branch"} {
			c, ok := v.get(k)
			if !ok {
				p.fail(path, "field '%s' is required", k)
				return nil
			}
			*parts[i] = p.exprV2(c, child(path, k))
		}
		return n
	}
	// memo
	if !p.fields(v, path, "type", "key", "expression") {
		return nil
	}
	n := &Memo{base: p.base(path)}
	if n.Key, ok = p.ident(v, path, "key"); !ok {
		return nil
	}
	e, ok := v.get("expression")
	if !ok {
		p.fail(path, "field 'expression' is required")
		return nil
	}
	n.Expression = p.exprV2(e, child(path, "expression"))
	if p.err == nil {
		var b strings.Builder
		canonicalExpr(&b, e)
		n.canonical = b.String()
	}
	return n
}

func reprJ(v *jval) string { return PyRepr(v.value()) }

// canonicalExpr writes the canonical JSON of a (valid) schema 2.0
// expression, as Python's model dump: fields in schema order with their
// defaults filled in, literal values and tool arguments in their own key
// order, and numbers as Python reads them (1 and 1.0 differ, 1.0 and
// 1.00 do not).
func canonicalExpr(b *strings.Builder, e *jval) {
	str := func(s string) { data, _ := json.Marshal(s); b.Write(data) }
	field := func(k string) *jval { v, _ := e.get(k); return v }
	t := field("type").s
	b.WriteString(`{"type":`)
	str(t)
	switch t {
	case "literal":
		b.WriteString(`,"value":`)
		canonicalValue(b, field("value"))
	case "variable":
		b.WriteString(`,"name":`)
		str(field("name").s)
	case "call":
		b.WriteString(`,"function":`)
		str(field("function").s)
		b.WriteString(`,"arguments":[`)
		if args := field("arguments"); args != nil {
			for i, a := range args.arr {
				if i > 0 {
					b.WriteByte(',')
				}
				canonicalExpr(b, a)
			}
		}
		b.WriteByte(']')
	case "tool_call":
		b.WriteString(`,"tool":`)
		str(field("tool").s)
		b.WriteString(`,"arguments":{`)
		if args := field("arguments"); args != nil {
			for i, k := range args.keys {
				if i > 0 {
					b.WriteByte(',')
				}
				str(k)
				b.WriteByte(':')
				canonicalExpr(b, args.vals[i])
			}
		}
		b.WriteByte('}')
	case "conditional":
		for _, k := range []string{"condition", "true_branch", "false_branch"} {
			b.WriteString(`,"` + k + `":`)
			canonicalExpr(b, field(k))
		}
	case "memo":
		b.WriteString(`,"key":`)
		str(field("key").s)
		b.WriteString(`,"expression":`)
		canonicalExpr(b, field("expression"))
	}
	b.WriteByte('}')
}

// canonicalValue writes a literal value keeping its key order, with
// floats as Python prints them.
func canonicalValue(b *strings.Builder, v *jval) {
	switch v.kind {
	case 'n':
		s := v.s
		if strings.ContainsAny(s, ".eE") {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				s = PyFloat(f)
			}
		}
		b.WriteString(s)
	case 'a':
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			canonicalValue(b, e)
		}
		b.WriteByte(']')
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			data, _ := json.Marshal(k)
			b.Write(data)
			b.WriteByte(':')
			canonicalValue(b, v.vals[i])
		}
		b.WriteByte('}')
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	case 's':
		data, _ := json.Marshal(v.s)
		b.Write(data)
	default:
		b.WriteString("null")
	}
}
