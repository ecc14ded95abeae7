package tools

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/treelang/treelang/engine"
)

// Builtins returns a toolbox with every builtin tool, each under its own
// name with a legacy (properties-only) definition whose properties are the
// operands in order:
//
//	add, subtract, multiply, divide      {"a":{}, "b":{}}
//	greater_than, less_than, equals      {"a":{}, "b":{}}
//	concat                               {"a":{}, "b":{}}
//	is_odd, is_even, negate              {"value":{}}
//	length, identity                     {"value":{}}
//	sum                                  {"values":{}}
//	range                                {"stop":{}}
//
// A toolbox file can give a builtin other properties (range with start,
// stop and step, concat with three strings); the arguments are then taken
// in that definition's property order. Each call of Builtins returns a new
// toolbox with its own counters.
func Builtins() *Toolbox {
	defs := builtinDefs()
	tools := make([]*tool, len(defs))
	for i, def := range defs {
		b := builtin(i + 1)
		raw, _ := json.Marshal(map[string]string{"builtin": b.String()})
		tools[i] = &tool{def: def, behavior: step{kind: kindBuiltin, builtin: b}, raw: raw}
	}
	return newToolbox("builtins", tools)
}

// builtinDefs builds the builtin definitions once; definitions are
// read-only, so every Builtins toolbox shares them.
var builtinDefs = sync.OnceValue(func() []*engine.ToolDefinition {
	defs := make([]*engine.ToolDefinition, 0, len(builtinSpecs)-1)
	for i := 1; i < len(builtinSpecs); i++ {
		spec := &builtinSpecs[i]
		props := make([]engine.Property, len(spec.props))
		for j, p := range spec.props {
			props[j] = engine.Property{Name: p, Schema: map[string]any{}}
		}
		def, err := engine.NewToolDefinition(spec.name, spec.desc, props, nil)
		if err != nil {
			panic("tools: builtin definition " + spec.name + ": " + err.Error())
		}
		defs = append(defs, def)
	}
	return defs
})

// BuiltinNames returns the names of the builtin tools, in the order of
// DESIGN.md's list (the order Builtins lists them).
func BuiltinNames() []string {
	names := make([]string, 0, len(builtinSpecs)-1)
	for i := 1; i < len(builtinSpecs); i++ {
		names = append(names, builtinSpecs[i].name)
	}
	return names
}

// NoTools returns the provider upstream's CLI uses without a fixture: it
// lists no tools, every lookup is a ToolNotFoundError and every call a
// ToolExecutionError.
func NoTools() engine.ToolProvider { return noTools{} }

type noTools struct{}

func (noTools) ListTools(context.Context) ([]*engine.ToolDefinition, error) {
	return []*engine.ToolDefinition{}, nil
}

func (noTools) Tool(_ context.Context, name string) (*engine.ToolDefinition, error) {
	return nil, engine.NotFound(name)
}

func (noTools) CallTool(_ context.Context, call *engine.Call) (any, error) {
	return nil, engine.Errorf(engine.ToolExecutionError,
		"CLI has no implementation for tool '%s'; use a replay fixture", call.Tool)
}
