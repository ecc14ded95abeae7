package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/treelang/treelang/engine"
)

func TestDecodeResult(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	tests := []struct {
		name string
		raw  string
		want any
	}{
		{"structured content wins", `{"content":[{"type":"text","text":"ignored"}],"structuredContent":{"big":12345678901234567890,"f":0.1}}`,
			map[string]any{"big": n("12345678901234567890"), "f": n("0.1")}},
		{"structured array", `{"content":[],"structuredContent":[1,2]}`, []any{n("1"), n("2")}},
		{"null structured falls through", `{"content":[{"type":"text","text":"7"}],"structuredContent":null}`, n("7")},
		{"no content", `{"content":[]}`, nil},
		{"missing content", `{}`, nil},
		{"JSON text", `{"content":[{"type":"text","text":" {\"a\": [1, 2.50]} "}]}`, map[string]any{"a": []any{n("1"), n("2.50")}}},
		{"plain text", `{"content":[{"type":"text","text":"Echo: hi "}]}`, "Echo: hi "},
		{"JSON string text", `{"content":[{"type":"text","text":"\"42\""}]}`, "42"},
		{"Python literal text", `{"content":[{"type":"text","text":"{'a': True, 'b': None, 'c': (1, 'x')}"}]}`,
			map[string]any{"a": true, "b": nil, "c": []any{n("1"), "x"}}},
		{"several texts", `{"content":[{"type":"text","text":"1"},{"type":"text","text":"two"}]}`, []any{n("1"), "two"}},
		{"mixed content", `{"content":[{"type":"text","text":"1"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
			[]any{map[string]any{"type": "text", "text": "1"}, map[string]any{"type": "image", "data": "AA==", "mimeType": "image/png"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeResult("tool", []byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestDecodeResultErrors(t *testing.T) {
	tests := []struct {
		raw, want string
	}{
		{`{"isError":true,"content":[{"type":"text","text":"bad a"},{"type":"image","data":""},{"type":"text","text":"bad b"}]}`,
			"Error calling tool t: bad a; bad b"},
		{`{"isError":true,"content":[]}`, "Error calling tool t: provider returned an unspecified error"},
		{`{"isError":true,"structuredContent":{"x":1},"content":[{"type":"text","text":"no"}]}`, "Error calling tool t: no"},
	}
	for _, tt := range tests {
		_, err := decodeResult("t", []byte(tt.raw))
		e := errorOfType(t, err, engine.ToolExecutionError)
		if e.Message != tt.want {
			t.Errorf("got %q, want %q", e.Message, tt.want)
		}
	}
	_, err := decodeResult("t", []byte(`{"content": 3}`))
	errorOfType(t, err, engine.ProviderResponseError)
}

func TestParsePyLiteral(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	good := []struct {
		in   string
		want any
	}{
		{"None", nil},
		{"True", true},
		{"[1, -2.5, .5, 1., 1_000, 2e3]", []any{n("1"), n("-2.5"), n("0.5"), n("1.0"), n("1000"), n("2e3")}},
		{`'it\'s' "x" 'y'`, "it'sxy"},
		{`'\x41\u00e9\n'`, "Aé\n"},
		{"{'k': [1, {'j': ()}],}", map[string]any{"k": []any{n("1"), map[string]any{"j": []any{}}}}},
		{"(1,)", []any{n("1")}},
		{"(1)", n("1")},
		{`"""multi
line"""`, "multi\nline"},
	}
	for _, tt := range good {
		got, ok := parsePyLiteral(tt.in)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePyLiteral(%q) = %#v, %v; want %#v", tt.in, got, ok, tt.want)
		}
	}
	for _, in := range []string{"", "hello", "Nonesuch", "{1: 2}", "{1, 2}", "[1,", "'open", "1 2", "b'x'", "01", strings.Repeat("[", 200) + strings.Repeat("]", 200)} {
		if v, ok := parsePyLiteral(in); ok {
			t.Errorf("parsePyLiteral(%q) = %#v, want no literal", in, v)
		}
	}
}

func FuzzParsePyLiteral(f *testing.F) {
	for _, s := range []string{"{'a': [1, (2,)]}", `"x\n"`, "None", "-1e5", "'''a'''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parsePyLiteral(s)
		if !ok {
			return
		}
		// Whatever parses is a JSON value that encodes and decodes to itself.
		data, err := engine.EncodeValue(v)
		if err != nil {
			t.Fatalf("%q parsed to %#v, which does not encode: %v", s, v, err)
		}
		back, err := engine.DecodeValue(data)
		if err != nil || !engine.Equal(back, v) {
			t.Fatalf("%q: %s does not round-trip", s, data)
		}
	})
}

func TestParseCommand(t *testing.T) {
	good := []struct {
		in   string
		want []string
	}{
		{"npx -y @modelcontextprotocol/server-everything", []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
		{`  node  "my server.js"   stdio `, []string{"node", "my server.js", "stdio"}},
		{`srv --dir 'a "b" c' --x=\$HOME`, []string{"srv", "--dir", `a "b" c`, "--x=$HOME"}},
		{`srv "a\"b\\c\n" ''`, []string{"srv", `a"b\c\n`, ""}},
		{`a\ b c"d"'e'`, []string{"a b", "cde"}},
		{"srv $HOME *.go | cat", []string{"srv", "$HOME", "*.go", "|", "cat"}},
	}
	for _, tt := range good {
		got, err := ParseCommand(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	bad := map[string]string{
		`srv 'open`:   "unterminated single quote at offset 4",
		`srv "open\"`: "unterminated double quote at offset 4",
		`srv \`:       "lone backslash",
		"   ":         "empty MCP server command",
	}
	for in, want := range bad {
		_, err := ParseCommand(in)
		if err == nil || !strings.Contains(err.Error(), want) || engine.TypeOf(err) != engine.ValueError {
			t.Errorf("ParseCommand(%q) error %v, want a ValueError saying %q", in, err, want)
		}
	}
}

func TestInputSchemaJSON(t *testing.T) {
	tests := []struct{ def, want string }{
		{`{"name":"legacy","properties":{"z":{"type":"string"},"a":{}}}`,
			`{"type":"object","properties":{"z":{"type":"string"},"a":{}},"required":["z","a"],"additionalProperties":false}`},
		{`{"name":"empty","properties":{}}`,
			`{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{`{"name":"full","input_schema":{"required":["z"],"properties":{"z":{"type":"integer","minimum":1},"a":{"type":"string"}},"$defs":{"x":{}}}}`,
			`{"type":"object","$defs":{"x":{}},"required":["z"],"properties":{"z":{"minimum":1,"type":"integer"},"a":{"type":"string"}}}`},
	}
	for _, tt := range tests {
		def, err := engine.ParseToolDefinition([]byte(tt.def), "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := inputSchemaJSON(def)
		if err != nil || string(got) != tt.want {
			t.Errorf("inputSchemaJSON(%s) =\n%s, %v\nwant\n%s", tt.def, got, err, tt.want)
		}
	}
}

func TestDefinitionFromMCP(t *testing.T) {
	def, err := definitionFromMCP([]byte(`{"name":"t","title":"T","inputSchema":{"type":"object","properties":{"q":{"type":"string"},"b":{"type":"number"}}},
		"annotations":{"title":"x","readOnlyHint":false,"idempotentHint":"yes","openWorldHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := def.PropertyNames(); !reflect.DeepEqual(got, []string{"q", "b"}) {
		t.Fatalf("properties %v", got)
	}
	a := def.Annotations
	if a == nil || a.ReadOnly == nil || *a.ReadOnly || a.Idempotent != nil || a.OpenWorld == nil || !*a.OpenWorld || a.Destructive != nil {
		t.Fatalf("annotations %+v", a)
	}
	// No inputSchema at all still gives a valid, empty definition.
	def, err = definitionFromMCP([]byte(`{"name":"bare"}`))
	if err != nil || len(def.Properties) != 0 {
		t.Fatalf("bare tool: %v, %+v", err, def)
	}
	_, err = definitionFromMCP([]byte(`{"name":"bad","inputSchema":{"type":"array"}}`))
	e := errorOfType(t, err, engine.ProviderResponseError)
	if e.Message != "Tool 'bad' input schema must describe an object" {
		t.Fatalf("message %q", e.Message)
	}
}
