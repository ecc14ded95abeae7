package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/treelang/treelang/engine/internal/jsonschema"
)

// Property is one named parameter of a tool, in definition order.
type Property struct {
	Name   string
	Schema map[string]any // the property's JSON Schema, decoded with exact numbers
}

// Effects is the optional effects metadata of a tool definition. The engine
// does not consult it for retries: only RetryPolicy.IdempotentTools does.
type Effects struct {
	Pure          *bool `json:"pure,omitempty"`
	Deterministic *bool `json:"deterministic,omitempty"`
	Idempotent    *bool `json:"idempotent,omitempty"`
}

// Annotations are MCP tool hints, shown to users and never trusted by
// default.
type Annotations struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// ToolDefinition is a normalized tool definition. Properties keep the order
// in which the source listed them, because schema 1.0 binds positional
// parameters by that order. Build one with ParseToolDefinition or
// NewToolDefinition; the zero value is not valid.
type ToolDefinition struct {
	Name           string
	Description    string
	HasDescription bool
	Properties     []Property
	InputSchema    map[string]any // the full schema when the source gave one; nil for legacy definitions
	Effects        *Effects
	Annotations    *Annotations

	once      sync.Once
	validator *jsonschema.Schema // compiled effective schema; nil on the legacy fast path
	fast      bool               // legacy definition whose property schemas are all empty
	propIndex map[string]struct{}
	names     []string
}

// PropertyNames returns the property names in definition order.
func (d *ToolDefinition) PropertyNames() []string {
	d.prepare()
	return d.names
}

// Legacy reports whether the definition has no input_schema, so every
// property is required and no other is allowed.
func (d *ToolDefinition) Legacy() bool { return d.InputSchema == nil }

// rawDefinition is the wire shape of a definition.
type rawDefinition struct {
	Name        json.RawMessage `json:"name"`
	Description json.RawMessage `json:"description"`
	Properties  json.RawMessage `json:"properties"`
	InputSchema json.RawMessage `json:"input_schema"`
	Effects     json.RawMessage `json:"effects"`
	Annotations *Annotations    `json:"annotations"`
}

// ParseToolDefinition decodes and normalizes one tool definition from JSON,
// with the Python library's checks and ProviderResponseError messages.
// expected, when not empty, is the name the caller asked for.
func ParseToolDefinition(data []byte, expected string) (*ToolDefinition, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, Errorf(ProviderResponseError, "Tool definition must be a mapping")
	}
	var raw rawDefinition
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, Errorf(ProviderResponseError, "Tool definition must be a mapping")
	}
	var name string
	if len(raw.Name) == 0 || json.Unmarshal(raw.Name, &name) != nil || name == "" {
		if expected == "" || len(raw.Name) != 0 {
			return nil, Errorf(ProviderResponseError, "Tool definition has no valid name")
		}
		name = expected
	}
	if expected != "" && name != expected {
		return nil, Errorf(ProviderResponseError, "Provider returned tool '%s' when '%s' was requested", name, expected)
	}
	def := &ToolDefinition{Name: name, Annotations: raw.Annotations}
	if len(raw.Description) > 0 && string(raw.Description) != "null" {
		if json.Unmarshal(raw.Description, &def.Description) != nil {
			return nil, Errorf(ProviderResponseError, "Tool '%s' has no valid description definition", name)
		}
		def.HasDescription = true
	}
	if len(raw.Effects) > 0 {
		eff, err := parseEffects(raw.Effects)
		if err != nil {
			return nil, Errorf(ProviderResponseError, "Tool '%s' has invalid effects", name)
		}
		def.Effects = eff
	}
	propsRaw := raw.Properties
	if len(raw.InputSchema) > 0 {
		v, err := DecodeValue(raw.InputSchema)
		schema, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil, Errorf(ProviderResponseError, "Tool '%s' has no valid input schema definition", name)
		}
		def.InputSchema = schema
		propsRaw = nil
		var inner struct {
			Properties json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(raw.InputSchema, &inner)
		propsRaw = inner.Properties
		if len(propsRaw) == 0 {
			propsRaw = json.RawMessage("{}")
		}
	}
	if len(propsRaw) == 0 {
		return nil, Errorf(ProviderResponseError, "Tool '%s' has no valid properties definition", name)
	}
	props, err := parseProperties(name, propsRaw)
	if err != nil {
		return nil, err
	}
	def.Properties = props
	if err := def.check(); err != nil {
		return nil, err
	}
	return def, nil
}

// NewToolDefinition builds and normalizes a definition from Go values. The
// properties are taken in the order given.
func NewToolDefinition(name, description string, props []Property, inputSchema map[string]any) (*ToolDefinition, error) {
	if name == "" {
		return nil, Errorf(ProviderResponseError, "Tool definition has no valid name")
	}
	def := &ToolDefinition{Name: name, Description: description, HasDescription: description != "", Properties: props, InputSchema: inputSchema}
	for _, p := range props {
		if err := checkProperty(name, p.Name, p.Schema); err != nil {
			return nil, err
		}
	}
	if err := def.check(); err != nil {
		return nil, err
	}
	return def, nil
}

func parseEffects(raw json.RawMessage) (*Effects, error) {
	v, err := DecodeValue(raw)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, fmt.Errorf("effects must be a mapping")
	}
	eff := &Effects{}
	for k, x := range m {
		b, ok := x.(bool)
		if !ok {
			return nil, fmt.Errorf("effect %s must be a boolean", k)
		}
		switch k {
		case "pure":
			eff.Pure = &b
		case "deterministic":
			eff.Deterministic = &b
		case "idempotent":
			eff.Idempotent = &b
		default:
			return nil, fmt.Errorf("unknown effect %s", k)
		}
	}
	return eff, nil
}

func parseProperties(tool string, raw json.RawMessage) ([]Property, error) {
	keys, values, err := OrderedObject(raw)
	if err != nil {
		return nil, Errorf(ProviderResponseError, "Tool '%s' has no valid properties definition", tool)
	}
	props := make([]Property, 0, len(keys))
	for i, k := range keys {
		v, err := DecodeValue(values[i])
		if err != nil {
			return nil, Errorf(ProviderResponseError, "Tool '%s' property '%s' must be a mapping", tool, k)
		}
		m, ok := v.(map[string]any)
		if !ok {
			if k == "" {
				return nil, Errorf(ProviderResponseError, "Tool '%s' contains an invalid property name", tool)
			}
			return nil, Errorf(ProviderResponseError, "Tool '%s' property '%s' must be a mapping", tool, k)
		}
		if err := checkProperty(tool, k, m); err != nil {
			return nil, err
		}
		props = append(props, Property{Name: k, Schema: m})
	}
	return props, nil
}

func checkProperty(tool, name string, schema map[string]any) error {
	if name == "" {
		return Errorf(ProviderResponseError, "Tool '%s' contains an invalid property name", tool)
	}
	if schema == nil {
		return Errorf(ProviderResponseError, "Tool '%s' property '%s' must be a mapping", tool, name)
	}
	prefix := fmt.Sprintf("Tool '%s' property '%s'", tool, name)
	if t, ok := schema["type"]; ok {
		switch x := t.(type) {
		case string:
		case []any:
			for _, e := range x {
				if _, ok := e.(string); !ok {
					return Errorf(ProviderResponseError, "%s has an invalid type", prefix)
				}
			}
		default:
			return Errorf(ProviderResponseError, "%s has an invalid type", prefix)
		}
	}
	if d, ok := schema["description"]; ok {
		if _, ok := d.(string); !ok {
			return Errorf(ProviderResponseError, "%s has an invalid description", prefix)
		}
	}
	if e, ok := schema["enum"]; ok {
		if _, ok := e.([]any); !ok {
			return Errorf(ProviderResponseError, "%s has an invalid enum", prefix)
		}
	}
	return nil
}

// EffectiveSchema returns the JSON Schema the arguments are validated
// against: the input_schema with its properties normalized, or for legacy
// definitions an object schema requiring every property and nothing else.
func (d *ToolDefinition) EffectiveSchema() map[string]any {
	props := make(map[string]any, len(d.Properties))
	for _, p := range d.Properties {
		props[p.Name] = p.Schema
	}
	if d.InputSchema != nil {
		out := make(map[string]any, len(d.InputSchema)+1)
		for k, v := range d.InputSchema {
			out[k] = v
		}
		out["properties"] = props
		return out
	}
	required := make([]any, len(d.Properties))
	for i, p := range d.Properties {
		required[i] = p.Name
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// check runs the effective-schema checks of normalization (§8.1 step 9).
func (d *ToolDefinition) check() error {
	schema := d.EffectiveSchema()
	if t, ok := schema["type"]; ok && t != "object" {
		return Errorf(ProviderResponseError, "Tool '%s' input schema must describe an object", d.Name)
	}
	if hasExternalRef(schema) {
		return Errorf(ProviderResponseError, "Tool '%s' input schema contains an external reference", d.Name)
	}
	if !jsonSerializable(schema) {
		return Errorf(ProviderResponseError, "Tool '%s' input schema must be JSON serializable", d.Name)
	}
	v, err := jsonschema.Compile(schema)
	if err != nil {
		kw := "schema"
		if ce, ok := err.(*jsonschema.CompileError); ok && ce.Keyword != "" {
			kw = ce.Keyword
		}
		return Errorf(ProviderResponseError, "Tool '%s' has an invalid input schema (%s)", d.Name, kw)
	}
	d.validator = v
	d.prepare()
	return nil
}

func (d *ToolDefinition) prepare() {
	d.once.Do(func() {
		d.names = make([]string, len(d.Properties))
		d.propIndex = make(map[string]struct{}, len(d.Properties))
		fast := d.InputSchema == nil
		for i, p := range d.Properties {
			d.names[i] = p.Name
			d.propIndex[p.Name] = struct{}{}
			if len(p.Schema) != 0 {
				fast = false
			}
		}
		d.fast = fast
	})
}

func hasExternalRef(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "$ref" {
				if s, ok := e.(string); ok && !strings.HasPrefix(s, "#/") {
					return true
				}
			}
			if hasExternalRef(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasExternalRef(e) {
				return true
			}
		}
	}
	return false
}

func jsonSerializable(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		for _, e := range x {
			if !jsonSerializable(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !jsonSerializable(e) {
				return false
			}
		}
	}
	return true
}

// ValidateArguments checks evaluated arguments against the definition's
// schema, as the Python library does right before every call. A failure is
// an ASTValidationError naming the path and keyword, never the value.
func (d *ToolDefinition) ValidateArguments(args map[string]any) error {
	d.prepare()
	if d.fast {
		// Legacy definition with empty property schemas: exactly the
		// property names, no more, no fewer. additionalProperties sorts
		// before required, so extras are reported first.
		if len(args) == len(d.names) {
			missing := false
			for _, name := range d.names {
				if _, ok := args[name]; !ok {
					missing = true
					break
				}
			}
			if !missing {
				return nil
			}
		}
		for k := range args {
			if _, ok := d.propIndex[k]; !ok {
				return d.argumentError("<root>", "additionalProperties")
			}
		}
		return d.argumentError("<root>", "required")
	}
	if d.validator == nil {
		if err := d.check(); err != nil {
			return err
		}
	}
	obj := make(map[string]any, len(args))
	for k, v := range args {
		obj[k] = v
	}
	if verr := d.validator.Validate(obj); verr != nil {
		path := "<root>"
		if len(verr.Path) > 0 {
			path = strings.Join(verr.Path, ".")
		}
		return d.argumentError(path, verr.Keyword)
	}
	return nil
}

func (d *ToolDefinition) argumentError(path, keyword string) error {
	return Errorf(ASTValidationError, "Tool '%s' input at '%s' violates the '%s' constraint", d.Name, path, keyword)
}

// MarshalJSON writes the definition in the wire format, properties in
// definition order.
func (d *ToolDefinition) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	writeJSON(&b, d.Name)
	if d.HasDescription || d.Description != "" {
		b.WriteString(`,"description":`)
		writeJSON(&b, d.Description)
	}
	if d.InputSchema != nil {
		b.WriteString(`,"input_schema":{`)
		keys := slices.Sorted(maps.Keys(d.InputSchema))
		first := true
		for _, k := range keys {
			if k == "properties" {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			writeJSON(&b, k)
			b.WriteByte(':')
			writeJSON(&b, d.InputSchema[k])
		}
		if !first {
			b.WriteByte(',')
		}
		b.WriteString(`"properties":`)
		writeProperties(&b, d.Properties)
		b.WriteByte('}')
	} else {
		b.WriteString(`,"properties":`)
		writeProperties(&b, d.Properties)
	}
	if d.Effects != nil {
		b.WriteString(`,"effects":`)
		writeJSON(&b, d.Effects)
	}
	if d.Annotations != nil {
		b.WriteString(`,"annotations":`)
		writeJSON(&b, d.Annotations)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeProperties(b *bytes.Buffer, props []Property) {
	b.WriteByte('{')
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(b, p.Name)
		b.WriteByte(':')
		if p.Schema == nil {
			b.WriteString("{}")
		} else {
			writeJSON(b, p.Schema)
		}
	}
	b.WriteByte('}')
}

func writeJSON(b *bytes.Buffer, v any) {
	data, err := EncodeValue(v)
	if err != nil {
		b.WriteString("null")
		return
	}
	b.Write(data)
}

// UnmarshalJSON decodes and normalizes a definition.
func (d *ToolDefinition) UnmarshalJSON(data []byte) error {
	def, err := ParseToolDefinition(data, "")
	if err != nil {
		return err
	}
	*d = ToolDefinition{Name: def.Name, Description: def.Description, HasDescription: def.HasDescription,
		Properties: def.Properties, InputSchema: def.InputSchema, Effects: def.Effects, Annotations: def.Annotations}
	return d.check()
}

// OrderedObject splits a JSON object into its keys, in document order, and
// their raw values. Duplicate keys keep the last value at the first
// position, as JSON decoders in Python do.
func OrderedObject(raw []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("expected a JSON object")
	}
	var keys []string
	var values []json.RawMessage
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if i, dup := index[k]; dup {
			values[i] = v
			continue
		}
		index[k] = len(keys)
		keys = append(keys, k)
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, values, nil
}
