package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/treelang/treelang/engine"
)

// Load reads and parses a toolbox file. Every failure, an unreadable file
// included, is an *engine.Error of type ValueError (an input error).
func Load(path string) (*Toolbox, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &engine.Error{Type: engine.ValueError, Message: "cannot read toolbox file: " + err.Error(), Err: err}
	}
	return Parse(data, path)
}

// Parse parses a toolbox file's contents. source names the file in error
// messages, which read "SOURCE: /json/pointer: what is wrong". Every
// failure is an *engine.Error of type ValueError.
func Parse(data []byte, source string) (*Toolbox, error) {
	p := &parser{source: source}
	tools, err := p.file(data)
	if err != nil {
		return nil, err
	}
	return newToolbox(source, tools), nil
}

type parser struct {
	source string
}

// errorf builds the ValueError for the value at path (a JSON pointer; ""
// is the whole document).
func (p *parser) errorf(path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return &engine.Error{Type: engine.ValueError, Message: p.source + ": " + msg}
}

func (p *parser) file(data []byte) ([]*tool, error) {
	if _, err := engine.DecodeValue(data); err != nil {
		return nil, p.syntaxError(data, err)
	}
	keys, raws, err := engine.OrderedObject(data)
	if err != nil {
		return nil, p.errorf("", `a toolbox must be a JSON object {"tools": [...]}`)
	}
	var toolsRaw json.RawMessage
	for i, k := range keys {
		if k != "tools" {
			return nil, p.errorf("", "unknown field %q (a toolbox has only \"tools\")", k)
		}
		toolsRaw = raws[i]
	}
	if toolsRaw == nil {
		return nil, p.errorf("", `missing field "tools"`)
	}
	var items []json.RawMessage
	if !isArray(toolsRaw) || json.Unmarshal(toolsRaw, &items) != nil {
		return nil, p.errorf("/tools", "must be an array of tools, got %s", rawType(toolsRaw))
	}
	tools := make([]*tool, 0, len(items))
	seen := make(map[string]int, len(items))
	for i, raw := range items {
		path := "/tools/" + strconv.Itoa(i)
		t, err := p.tool(path, raw)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[t.def.Name]; dup {
			return nil, p.errorf(path+"/name", "duplicate tool name %q (also /tools/%d)", t.def.Name, j)
		}
		seen[t.def.Name] = i
		tools = append(tools, t)
	}
	return tools, nil
}

// syntaxError reports malformed JSON with its line and column.
func (p *parser) syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		return p.errorf("", "invalid JSON at line %d, column %d: %s", line, col, se.Error())
	}
	if errors.Is(err, io.EOF) || len(bytes.TrimSpace(data)) == 0 {
		return p.errorf("", "invalid JSON: the file is empty")
	}
	return p.errorf("", "invalid JSON: %s", err)
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}

// toolFields are the fields a tool may have: a tool definition's and
// "behavior".
var toolFields = map[string]bool{
	"name": true, "description": true, "properties": true, "input_schema": true,
	"effects": true, "annotations": true, "behavior": true,
}

func (p *parser) tool(path string, raw json.RawMessage) (*tool, error) {
	keys, raws, err := engine.OrderedObject(raw)
	if err != nil {
		return nil, p.errorf(path, "a tool must be an object, got %s", rawType(raw))
	}
	// The definition is the tool's JSON minus "behavior", with its keys
	// and raw values as written, so property order survives.
	var def bytes.Buffer
	var behaviorRaw json.RawMessage
	def.WriteByte('{')
	for i, k := range keys {
		if !toolFields[k] {
			return nil, p.errorf(path, "unknown field %q (a tool has %s)", k, fieldList(toolFields))
		}
		if k == "behavior" {
			behaviorRaw = raws[i]
			continue
		}
		if def.Len() > 1 {
			def.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		def.Write(kj)
		def.WriteByte(':')
		def.Write(raws[i])
	}
	def.WriteByte('}')
	var name string
	if i := slices.Index(keys, "name"); i < 0 {
		return nil, p.errorf(path, `missing field "name"`)
	} else if json.Unmarshal(raws[i], &name) != nil || name == "" {
		return nil, p.errorf(path+"/name", "must be a non-empty string, got %s", rawType(raws[i]))
	}
	d, err := engine.ParseToolDefinition(def.Bytes(), "")
	if err != nil {
		return nil, p.errorf(path, "%s", err.Error())
	}
	if behaviorRaw == nil {
		return nil, p.errorf(path, "tool %q has no \"behavior\"", name)
	}
	bv, _ := engine.DecodeValue(behaviorRaw)
	t := &tool{def: d}
	b, err := p.behavior(path+"/behavior", bv, d)
	if err != nil {
		return nil, err
	}
	t.behavior = b
	var compact bytes.Buffer
	_ = json.Compact(&compact, behaviorRaw)
	t.raw = compact.Bytes()
	return t, nil
}

var behaviorFields = map[string]bool{"builtin": true, "output": true, "table": true, "script": true, "then": true, "delay_ms": true}
var stepFields = map[string]bool{"builtin": true, "output": true, "error": true, "message": true, "delay_ms": true}

func (p *parser) behavior(path string, v any, def *engine.ToolDefinition) (step, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return step{}, p.errorf(path, "a behavior must be an object, got %s", engine.TypeName(v))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !behaviorFields[k] {
			hint := ""
			if k == "error" || k == "message" {
				hint = `; an error is a script step: {"script": [{"error": TYPE, "message": "..."}]}`
			}
			return step{}, p.errorf(path, "unknown field %q (a behavior has %s)%s", k, fieldList(behaviorFields), hint)
		}
	}
	kind, err := p.oneOf(path, m, "builtin", "output", "table", "script")
	if err != nil {
		return step{}, err
	}
	var s step
	if s.delay, err = p.delay(path, m); err != nil {
		return step{}, err
	}
	if _, ok := m["then"]; ok && kind != "script" {
		return step{}, p.errorf(path+"/then", `"then" belongs to a "script" behavior`)
	}
	switch kind {
	case "builtin":
		s.kind = kindBuiltin
		s.builtin, err = p.builtinName(path+"/builtin", m["builtin"], def)
	case "output":
		s.kind = kindOutput
		s.output = m["output"]
	case "table":
		s.kind = kindTable
		s.table, err = p.table(path+"/table", m["table"])
	case "script":
		s.kind = kindScript
		err = p.script(path, m, def, &s)
	}
	if err != nil {
		return step{}, err
	}
	return s, nil
}

// oneOf returns which of the keys m holds, requiring exactly one.
func (p *parser) oneOf(path string, m map[string]any, keys ...string) (string, error) {
	var found []string
	for _, k := range keys {
		if _, ok := m[k]; ok {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		quoted := make([]string, len(keys))
		for i, k := range keys {
			quoted[i] = strconv.Quote(k)
		}
		got := "none"
		if len(found) > 0 {
			got = strings.Join(found, " and ")
		}
		return "", p.errorf(path, "needs exactly one of %s, got %s", strings.Join(quoted, ", "), got)
	}
	return found[0], nil
}

func (p *parser) delay(path string, m map[string]any) (time.Duration, error) {
	v, ok := m["delay_ms"]
	if !ok {
		return 0, nil
	}
	path += "/delay_ms"
	n, ok := v.(json.Number)
	if !ok {
		return 0, p.errorf(path, "must be a number of milliseconds, got %s", engine.TypeName(v))
	}
	ms, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, p.errorf(path, "must be a number of milliseconds, got %s", n)
	}
	if engine.CompareNumbers(n, "0") < 0 {
		return 0, p.errorf(path, "must not be negative, got %s", n)
	}
	if ms*float64(time.Millisecond) > float64(math.MaxInt64) {
		return 0, p.errorf(path, "is too large, got %s", n)
	}
	return time.Duration(math.Round(ms * float64(time.Millisecond))), nil
}

func (p *parser) builtinName(path string, v any, def *engine.ToolDefinition) (builtin, error) {
	name, ok := v.(string)
	if !ok {
		return 0, p.errorf(path, "must be the name of a builtin, got %s", engine.TypeName(v))
	}
	b, ok := builtinByName[name]
	if !ok {
		return 0, p.errorf(path, "unknown builtin %q (builtins: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	// A legacy definition passes exactly its properties; any definition
	// passes at most its properties.
	spec := &builtinSpecs[b]
	n := len(def.Properties)
	if n < spec.min || (def.Legacy() && spec.max >= 0 && n > spec.max) {
		return 0, p.errorf(path, "builtin %q takes %s, but tool %q has %d properties",
			name, operandCount(spec), def.Name, n)
	}
	return b, nil
}

func operandCount(spec *builtinSpec) string {
	switch {
	case spec.min == spec.max:
		return arguments(spec.min)
	case spec.max < 0:
		return "at least " + arguments(spec.min)
	}
	return fmt.Sprintf("%d to %d arguments", spec.min, spec.max)
}

func arguments(n int) string {
	if n == 1 {
		return "1 argument"
	}
	return strconv.Itoa(n) + " arguments"
}

func (p *parser) table(path string, v any) ([]row, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, p.errorf(path, `must be an array of {"arguments": {...}, "output": V}, got %s`, engine.TypeName(v))
	}
	rows := make([]row, len(items))
	for i, item := range items {
		rp := path + "/" + strconv.Itoa(i)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, p.errorf(rp, `a row must be an object {"arguments": {...}, "output": V}, got %s`, engine.TypeName(item))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k != "arguments" && k != "output" {
				return nil, p.errorf(rp, `unknown field %q (a row has "arguments" and "output")`, k)
			}
		}
		a, ok := m["arguments"]
		if !ok {
			return nil, p.errorf(rp, `missing field "arguments"`)
		}
		args, ok := a.(map[string]any)
		if !ok {
			return nil, p.errorf(rp+"/arguments", "must be an object, got %s", engine.TypeName(a))
		}
		out, ok := m["output"]
		if !ok {
			return nil, p.errorf(rp, `missing field "output"`)
		}
		rows[i] = row{arguments: args, output: out}
	}
	return rows, nil
}

func (p *parser) script(path string, m map[string]any, def *engine.ToolDefinition, s *step) error {
	items, ok := m["script"].([]any)
	if !ok {
		return p.errorf(path+"/script", "must be an array of steps, got %s", engine.TypeName(m["script"]))
	}
	s.script = make([]step, len(items))
	for i, item := range items {
		st, err := p.step(path+"/script/"+strconv.Itoa(i), item, def)
		if err != nil {
			return err
		}
		s.script[i] = st
	}
	if then, ok := m["then"]; ok {
		st, err := p.step(path+"/then", then, def)
		if err != nil {
			return err
		}
		s.then = &st
	}
	if len(s.script) == 0 && s.then == nil {
		return p.errorf(path+"/script", `needs at least one step, or a "then" step`)
	}
	return nil
}

func (p *parser) step(path string, v any, def *engine.ToolDefinition) (step, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return step{}, p.errorf(path, "a step must be an object, got %s", engine.TypeName(v))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !stepFields[k] {
			return step{}, p.errorf(path, "unknown field %q (a step has %s)", k, fieldList(stepFields))
		}
	}
	kind, err := p.oneOf(path, m, "output", "builtin", "error")
	if err != nil {
		return step{}, err
	}
	var s step
	if s.delay, err = p.delay(path, m); err != nil {
		return step{}, err
	}
	if _, ok := m["message"]; ok && kind != "error" {
		return step{}, p.errorf(path+"/message", `"message" belongs to an "error" step`)
	}
	switch kind {
	case "output":
		s.kind = kindOutput
		s.output = m["output"]
	case "builtin":
		s.kind = kindBuiltin
		if s.builtin, err = p.builtinName(path+"/builtin", m["builtin"], def); err != nil {
			return step{}, err
		}
	case "error":
		s.kind = kindError
		name, ok := m["error"].(string)
		if !ok {
			return step{}, p.errorf(path+"/error", "must be an error type name, got %s", engine.TypeName(m["error"]))
		}
		if !engine.KnownErrorType(name) {
			return step{}, p.errorf(path+"/error", "unknown error type %q", name)
		}
		s.errType = engine.ErrorType(name)
		s.message = fmt.Sprintf("%s from tool '%s'", name, def.Name)
		if msg, ok := m["message"]; ok {
			if s.message, ok = msg.(string); !ok {
				return step{}, p.errorf(path+"/message", "must be a string, got %s", engine.TypeName(msg))
			}
		}
	}
	return s, nil
}

func isArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// rawType names the JSON type of a raw value.
func rawType(raw json.RawMessage) string {
	v, err := engine.DecodeValue(raw)
	if err != nil {
		return "invalid JSON"
	}
	return engine.TypeName(v)
}

func fieldList(fields map[string]bool) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, strconv.Quote(k))
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
