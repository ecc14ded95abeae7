package jsonschema

import (
	"fmt"
	"strings"
)

// Schema is a compiled schema. It is immutable and safe for concurrent use.
type Schema struct {
	root *node
}

// CompileError reports an invalid schema. Keyword names the offending
// keyword of the schema (for example "type", "minimum", "pattern" or
// "$ref"); Path is the JSON pointer of that keyword inside the schema,
// such as "/properties/a/type".
type CompileError struct{ Keyword, Path string }

// Error returns a short description naming the keyword and its location.
func (e *CompileError) Error() string {
	return fmt.Sprintf("invalid schema: keyword %q at %q", e.Keyword, "#"+e.Path)
}

// ValidationError is the first failure of an instance. Path holds the
// instance location as segments (array indexes as decimal strings; empty
// at the root) and Keyword the innermost failing keyword.
type ValidationError struct {
	Path    []string
	Keyword string
}

// Error returns the failure as "input at 'a.1' violates the 'type'
// constraint", with "<root>" for an empty path. It never includes values.
func (e *ValidationError) Error() string {
	p := "<root>"
	if len(e.Path) > 0 {
		p = strings.Join(e.Path, ".")
	}
	return "input at '" + p + "' violates the '" + e.Keyword + "' constraint"
}

// Compile compiles a decoded JSON schema (nil, bool, json.Number, string,
// []any, map[string]any; float64 and Go integers are tolerated as
// numbers). It returns a *CompileError when the schema is invalid.
func Compile(schema any) (*Schema, error) {
	c := &compiler{root: schema, nodes: map[string]*node{}}
	if _, ok := schema.(map[string]any); !ok {
		if _, ok := schema.(bool); !ok {
			return nil, &CompileError{Keyword: "type", Path: ""}
		}
	}
	root, err := c.compile("type", "", schema)
	if err != nil {
		return nil, err
	}
	if err := c.checkCycles(root); err != nil {
		return nil, err
	}
	if c.uneval {
		for _, o := range c.objects {
			c.annotate(o.n, o.s)
		}
	}
	return &Schema{root: root}, nil
}

// Validate returns the first failure of instance, or nil when it is valid.
// The instance is decoded JSON with json.Number numbers (float64 and Go
// integers are tolerated). A valid instance is checked without allocating,
// apart from float64 or Go integer numbers and the keywords multipleOf (on
// non-integers) and uniqueItems (on long arrays).
func (s *Schema) Validate(instance any) *ValidationError {
	e := s.root.validate(false, instance)
	if e == nil {
		return nil
	}
	// Segments were appended innermost first while unwinding.
	p := e.Path
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return e
}
