package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func mustCompile(t testing.TB, schema string) *Schema {
	t.Helper()
	s, err := Compile(decode(t, schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

// want renders a result as "ok" or "PATH KEYWORD" with PATH "<root>" at
// the top, as the engine's error message does.
func render(e *ValidationError) string {
	if e == nil {
		return "ok"
	}
	p := "<root>"
	if len(e.Path) > 0 {
		p = strings.Join(e.Path, ".")
	}
	return p + " " + e.Keyword
}

type vcase struct {
	name, schema, instance, want string
}

var validateCases = []vcase{
	// The examples of the reference (§8.2).
	{"legacy missing", `{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"],"additionalProperties":false}`, `{"a":1}`, "<root> required"},
	{"legacy extra before missing", `{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"],"additionalProperties":false}`, `{"a":1,"c":2}`, "<root> additionalProperties"},
	{"legacy ok", `{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"],"additionalProperties":false}`, `{"a":1,"b":null}`, "ok"},
	{"minimum ignores strings", `{"properties":{"value":{"type":"integer","minimum":0}}}`, `{"value":"x"}`, "value type"},
	{"minimum before type", `{"properties":{"value":{"type":"integer","minimum":0}}}`, `{"value":-1.5}`, "value minimum"},

	// Alphabetical order of keywords and properties, depth first.
	{"properties before required", `{"properties":{"a":{"type":"string"}},"required":["b"]}`, `{"a":1}`, "a type"},
	{"required before type", `{"required":["a"],"type":"object"}`, `{}`, "<root> required"},
	{"property order", `{"properties":{"b":{"type":"string"},"a":{"type":"string"}}}`, `{"b":1,"a":2}`, "a type"},
	{"depth first", `{"properties":{"a":{"properties":{"z":{"type":"string"}}},"b":{"type":"string"}}}`, `{"a":{"z":1},"b":1}`, "a.z type"},
	{"maxLength before pattern", `{"pattern":"^a","maxLength":1}`, `"bb"`, "<root> maxLength"},
	{"enum before type", `{"type":"string","enum":["a"]}`, `1`, "<root> enum"},
	{"ref first", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","minLength":5}`, `"ab"`, "<root> minLength"},
	{"ref before additionalProperties", `{"$defs":{"s":{"required":["x"]}},"$ref":"#/$defs/s","additionalProperties":false}`, `{"y":1}`, "<root> required"},

	// type
	{"type string ok", `{"type":"string"}`, `"x"`, "ok"},
	{"type string bad", `{"type":"string"}`, `1`, "<root> type"},
	{"type integer 1.0", `{"type":"integer"}`, `1.0`, "ok"},
	{"type integer 2e3", `{"type":"integer"}`, `2e3`, "ok"},
	{"type integer 1.5e1", `{"type":"integer"}`, `1.5e1`, "ok"},
	{"type integer huge", `{"type":"integer"}`, `123456789012345678901234567890`, "ok"},
	{"type integer 1.5", `{"type":"integer"}`, `1.5`, "<root> type"},
	{"type integer 1e-1", `{"type":"integer"}`, `1e-1`, "<root> type"},
	{"type integer bool", `{"type":"integer"}`, `true`, "<root> type"},
	{"type number bool", `{"type":"number"}`, `false`, "<root> type"},
	{"type number int", `{"type":"number"}`, `3`, "ok"},
	{"type null", `{"type":"null"}`, `null`, "ok"},
	{"type null bad", `{"type":"null"}`, `0`, "<root> type"},
	{"type boolean", `{"type":"boolean"}`, `true`, "ok"},
	{"type boolean bad", `{"type":"boolean"}`, `"true"`, "<root> type"},
	{"type array", `{"type":"array"}`, `[]`, "ok"},
	{"type array bad", `{"type":"array"}`, `{}`, "<root> type"},
	{"type object", `{"type":"object"}`, `{}`, "ok"},
	{"type object bad", `{"type":"object"}`, `[]`, "<root> type"},
	{"type list nullable", `{"type":["string","null"]}`, `null`, "ok"},
	{"type list bad", `{"type":["string","null"]}`, `1`, "<root> type"},

	// enum and const
	{"enum ok", `{"enum":["a",1,null]}`, `null`, "ok"},
	{"enum number value", `{"enum":[1]}`, `1.0`, "ok"},
	{"enum bool not number", `{"enum":[1]}`, `true`, "<root> enum"},
	{"enum zero not false", `{"enum":[false]}`, `0`, "<root> enum"},
	{"enum bad", `{"enum":["a","b"]}`, `"c"`, "<root> enum"},
	{"enum empty", `{"enum":[]}`, `"c"`, "<root> enum"},
	{"enum object order", `{"enum":[{"a":1,"b":[1,2]}]}`, `{"b":[1,2.0],"a":1}`, "ok"},
	{"enum array order matters", `{"enum":[[1,2]]}`, `[2,1]`, "<root> enum"},
	{"const ok", `{"const":{"x":[1,"a"]}}`, `{"x":[1.00,"a"]}`, "ok"},
	{"const bad", `{"const":"a"}`, `"b"`, "<root> const"},
	{"const null", `{"const":null}`, `false`, "<root> const"},
	{"const true not 1", `{"const":true}`, `1`, "<root> const"},
	{"const big exact", `{"const":9007199254740993}`, `9007199254740992`, "<root> const"},
	{"const big exact ok", `{"const":9007199254740993}`, `9007199254740993.0`, "ok"},

	// numeric ranges
	{"minimum ok", `{"minimum":0}`, `0`, "ok"},
	{"minimum bad", `{"minimum":0}`, `-0.0001`, "<root> minimum"},
	{"minimum decimal", `{"minimum":0.1}`, `0.1`, "ok"},
	{"maximum ok", `{"maximum":1e2}`, `100`, "ok"},
	{"maximum bad", `{"maximum":1e2}`, `100.5`, "<root> maximum"},
	{"exclusiveMinimum bad", `{"exclusiveMinimum":5}`, `5.0`, "<root> exclusiveMinimum"},
	{"exclusiveMinimum ok", `{"exclusiveMinimum":5}`, `5.00001`, "ok"},
	{"exclusiveMaximum bad", `{"exclusiveMaximum":-1}`, `-1`, "<root> exclusiveMaximum"},
	{"exclusiveMaximum ok", `{"exclusiveMaximum":-1}`, `-2`, "ok"},
	{"minimum ignores bool", `{"minimum":5}`, `true`, "ok"},
	{"maximum big", `{"maximum":18446744073709551615}`, `18446744073709551616`, "<root> maximum"},
	{"multipleOf ok", `{"multipleOf":3}`, `9`, "ok"},
	{"multipleOf bad", `{"multipleOf":3}`, `10`, "<root> multipleOf"},
	{"multipleOf decimal exact", `{"multipleOf":0.1}`, `0.3`, "ok"},
	{"multipleOf decimal bad", `{"multipleOf":0.1}`, `0.35`, "<root> multipleOf"},
	{"multipleOf 0.01", `{"multipleOf":0.01}`, `19.99`, "ok"},
	{"multipleOf big exponent", `{"multipleOf":2}`, `1e1000000`, "ok"},
	{"multipleOf big exponent bad", `{"multipleOf":3}`, `1e1000000`, "<root> multipleOf"},
	{"multipleOf tiny", `{"multipleOf":1e-1000000}`, `0.5`, "ok"},
	{"multipleOf tiny instance", `{"multipleOf":1}`, `1e-1000000`, "<root> multipleOf"},
	{"multipleOf 1.5", `{"multipleOf":1.5}`, `4.5`, "ok"},
	{"multipleOf 1.5 bad", `{"multipleOf":1.5}`, `4`, "<root> multipleOf"},
	{"multipleOf ignores strings", `{"multipleOf":2}`, `"3"`, "ok"},

	// strings
	{"minLength code points", `{"minLength":2}`, `"é"`, "<root> minLength"},
	{"maxLength code points", `{"maxLength":1}`, `"😀"`, "ok"},
	{"maxLength bad", `{"maxLength":2}`, `"abc"`, "<root> maxLength"},
	{"minLength ignores numbers", `{"minLength":2}`, `1`, "ok"},
	{"minLength 1.0", `{"minLength":1.0}`, `""`, "<root> minLength"},
	{"pattern search", `{"pattern":"b+"}`, `"abbc"`, "ok"},
	{"pattern bad", `{"pattern":"^b"}`, `"abc"`, "<root> pattern"},
	{"pattern ignores numbers", `{"pattern":"^b"}`, `12`, "ok"},

	// formats
	{"format email", `{"format":"email"}`, `"a@b"`, "ok"},
	{"format email bad", `{"format":"email"}`, `"ab"`, "<root> format"},
	{"format ipv4", `{"format":"ipv4"}`, `"192.168.0.1"`, "ok"},
	{"format ipv4 bad", `{"format":"ipv4"}`, `"256.1.1.1"`, "<root> format"},
	{"format ipv4 leading zero", `{"format":"ipv4"}`, `"01.1.1.1"`, "<root> format"},
	{"format ipv4 v6", `{"format":"ipv4"}`, `"::1"`, "<root> format"},
	{"format ipv6", `{"format":"ipv6"}`, `"2001:db8::1"`, "ok"},
	{"format ipv6 mapped", `{"format":"ipv6"}`, `"::ffff:1.2.3.4"`, "ok"},
	{"format ipv6 zone", `{"format":"ipv6"}`, `"fe80::1%eth0"`, "<root> format"},
	{"format ipv6 v4", `{"format":"ipv6"}`, `"1.2.3.4"`, "<root> format"},
	{"format uuid", `{"format":"uuid"}`, `"123e4567-E89b-12d3-a456-426614174000"`, "ok"},
	{"format uuid bad", `{"format":"uuid"}`, `"123e4567e89b12d3a456426614174000"`, "<root> format"},
	{"format date", `{"format":"date"}`, `"2024-02-29"`, "ok"},
	{"format date not leap", `{"format":"date"}`, `"2023-02-29"`, "<root> format"},
	{"format date year 0", `{"format":"date"}`, `"0000-01-01"`, "<root> format"},
	{"format date-time", `{"format":"date-time"}`, `"2024-01-02T03:04:05.123+01:00"`, "ok"},
	{"format date-time lower", `{"format":"date-time"}`, `"2024-01-02t03:04:05z"`, "ok"},
	{"format date-time no offset", `{"format":"date-time"}`, `"2024-01-02T03:04:05"`, "<root> format"},
	{"format date-time hour", `{"format":"date-time"}`, `"2024-01-02T24:00:00Z"`, "<root> format"},
	{"format time", `{"format":"time"}`, `"23:59:59"`, "ok"},
	{"format time short fields", `{"format":"time"}`, `"1:2:3"`, "ok"},
	{"format time offset", `{"format":"time"}`, `"23:59:59Z"`, "<root> format"},
	{"format time fraction", `{"format":"time"}`, `"23:59:59.5"`, "<root> format"},
	{"format time leap second", `{"format":"time"}`, `"23:59:60"`, "<root> format"},
	{"format time hour", `{"format":"time"}`, `"24:00:00"`, "<root> format"},
	{"format time bad", `{"format":"time"}`, `"23:59"`, "<root> format"},
	{"format time three digits", `{"format":"time"}`, `"023:59:59"`, "<root> format"},
	{"format date-time newline", `{"format":"date-time"}`, `"2024-01-02T03:04:05Z\n"`, "ok"},
	{"format idn-email", `{"format":"idn-email"}`, `"x"`, "<root> format"},
	{"format json-pointer", `{"format":"json-pointer"}`, `"/a~0b/c~1"`, "ok"},
	{"format json-pointer empty", `{"format":"json-pointer"}`, `""`, "ok"},
	{"format json-pointer bad escape", `{"format":"json-pointer"}`, `"/a~2"`, "<root> format"},
	{"format json-pointer relative", `{"format":"json-pointer"}`, `"a"`, "<root> format"},
	{"format relative-json-pointer", `{"format":"relative-json-pointer"}`, `"10/a"`, "ok"},
	{"format relative-json-pointer hash", `{"format":"relative-json-pointer"}`, `"1#"`, "ok"},
	{"format relative-json-pointer zero", `{"format":"relative-json-pointer"}`, `"0"`, "ok"},
	{"format relative-json-pointer leading zero", `{"format":"relative-json-pointer"}`, `"01/a"`, "<root> format"},
	{"format relative-json-pointer python 100", `{"format":"relative-json-pointer"}`, `"100"`, "<root> format"},
	{"format relative-json-pointer no int", `{"format":"relative-json-pointer"}`, `"#"`, "<root> format"},
	{"format uri", `{"format":"uri"}`, `"https://example.com/a?b=c#d"`, "ok"},
	{"format uri relative", `{"format":"uri"}`, `"/a/b"`, "<root> format"},
	{"format uri space", `{"format":"uri"}`, `"http://a b"`, "<root> format"},
	{"format regex", `{"format":"regex"}`, `"^a+$"`, "ok"},
	{"format regex bad", `{"format":"regex"}`, `"(a"`, "<root> format"},
	{"format unknown", `{"format":"hostname-ish"}`, `"!!"`, "ok"},
	{"format ignores numbers", `{"format":"email"}`, `1`, "ok"},

	// arrays
	{"minItems bad", `{"minItems":2}`, `[1]`, "<root> minItems"},
	{"maxItems bad", `{"maxItems":1}`, `[1,2]`, "<root> maxItems"},
	{"maxItems ok", `{"maxItems":2}`, `[1,2]`, "ok"},
	{"uniqueItems ok", `{"uniqueItems":true}`, `[1,"1",true,null,[1],{"a":1}]`, "ok"},
	{"uniqueItems numbers", `{"uniqueItems":true}`, `[1,2,1.0]`, "<root> uniqueItems"},
	{"uniqueItems objects", `{"uniqueItems":true}`, `[{"a":1,"b":2},{"b":2,"a":1}]`, "<root> uniqueItems"},
	{"uniqueItems bool vs number", `{"uniqueItems":true}`, `[1,true,0,false]`, "ok"},
	{"uniqueItems false", `{"uniqueItems":false}`, `[1,1]`, "ok"},
	{"uniqueItems long", `{"uniqueItems":true}`, `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,1e1]`, "<root> uniqueItems"},
	{"uniqueItems long ok", `{"uniqueItems":true}`, `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,"10",[10],{"a":10}]`, "ok"},
	{"items", `{"items":{"type":"integer"}}`, `[1,2,"x",true]`, "2 type"},
	{"items ok", `{"items":{"type":"integer"}}`, `[1,2]`, "ok"},
	{"items nested", `{"properties":{"values":{"items":{"minimum":0}}}}`, `{"values":[0,-1]}`, "values.1 minimum"},
	{"items false", `{"items":false}`, `[1]`, "<root> items"},
	{"items false empty", `{"items":false}`, `[]`, "ok"},
	{"prefixItems", `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `["a","b"]`, "1 type"},
	{"prefixItems short", `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `["a"]`, "ok"},
	{"items after prefix", `{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `["a",1,"b"]`, "2 type"},
	{"items false after prefix", `{"prefixItems":[{}],"items":false}`, `[1,2]`, "<root> items"},
	{"items before prefixItems", `{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `[1,"b"]`, "1 type"},
	{"contains ok", `{"contains":{"type":"string"}}`, `[1,"a"]`, "ok"},
	{"contains none", `{"contains":{"type":"string"}}`, `[1,2]`, "<root> contains"},
	{"contains empty", `{"contains":{"type":"string"}}`, `[]`, "<root> contains"},
	{"minContains", `{"contains":{"type":"string"},"minContains":2}`, `["a",1]`, "<root> minContains"},
	{"minContains 0", `{"contains":{"type":"string"},"minContains":0}`, `[1]`, "ok"},
	{"maxContains", `{"contains":{"type":"string"},"maxContains":1}`, `["a","b"]`, "<root> maxContains"},
	{"maxContains alone", `{"maxContains":0}`, `["a"]`, "ok"},

	// objects
	{"required ok", `{"required":["a"]}`, `{"a":null}`, "ok"},
	{"required ignores arrays", `{"required":["a"]}`, `[]`, "ok"},
	{"minProperties", `{"minProperties":1}`, `{}`, "<root> minProperties"},
	{"maxProperties", `{"maxProperties":1}`, `{"a":1,"b":2}`, "<root> maxProperties"},
	{"additionalProperties schema", `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"a":1,"c":"x","b":2,"d":3}`, "b type"},
	{"additionalProperties schema ok", `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, `{"a":1,"c":"x"}`, "ok"},
	{"additionalProperties patterns", `{"patternProperties":{"^x-":{}},"additionalProperties":false}`, `{"x-a":1}`, "ok"},
	{"additionalProperties patterns bad", `{"patternProperties":{"^x-":{}},"additionalProperties":false}`, `{"x-a":1,"y":2}`, "<root> additionalProperties"},
	{"additionalProperties true", `{"additionalProperties":true}`, `{"a":1}`, "ok"},
	{"additionalProperties many", `{"properties":{"p0":{},"p1":{},"p2":{},"p3":{},"p4":{},"p5":{},"p6":{},"p7":{},"p8":{}},"additionalProperties":false}`, `{"p8":1,"p0":2}`, "ok"},
	{"additionalProperties many bad", `{"properties":{"p0":{},"p1":{},"p2":{},"p3":{},"p4":{},"p5":{},"p6":{},"p7":{},"p8":{}},"additionalProperties":false}`, `{"p9":1}`, "<root> additionalProperties"},
	{"patternProperties", `{"patternProperties":{"^n":{"type":"number"},"^s":{"type":"string"}}}`, `{"s1":1,"n1":"x"}`, "n1 type"},
	{"patternProperties first name", `{"patternProperties":{"^s":{"type":"string"}}}`, `{"s3":1,"s1":2,"s2":"x"}`, "s1 type"},
	{"patternProperties ok", `{"patternProperties":{"^s":{"type":"string"}}}`, `{"s1":"a","t":1}`, "ok"},
	{"propertyNames", `{"propertyNames":{"maxLength":2}}`, `{"ab":1,"abcd":2,"abc":3}`, "<root> maxLength"},
	{"propertyNames ok", `{"propertyNames":{"pattern":"^[a-z]+$"}}`, `{"ab":1}`, "ok"},
	{"dependentRequired", `{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, "<root> dependentRequired"},
	{"dependentRequired ok", `{"dependentRequired":{"a":["b"]}}`, `{"b":1}`, "ok"},
	{"dependentSchemas", `{"dependentSchemas":{"a":{"properties":{"b":{"type":"string"}}}}}`, `{"a":1,"b":2}`, "b type"},
	{"dependentSchemas absent", `{"dependentSchemas":{"a":{"properties":{"b":{"type":"string"}}}}}`, `{"b":2}`, "ok"},

	// combinators
	{"allOf innermost", `{"allOf":[{"type":"object"},{"properties":{"a":{"maximum":1}}}]}`, `{"a":2}`, "a maximum"},
	{"allOf ok", `{"allOf":[{"type":"integer"},{"minimum":1}]}`, `2`, "ok"},
	{"anyOf ok", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `null`, "ok"},
	{"anyOf bad", `{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, `{"a":1}`, "a anyOf"},
	{"oneOf ok", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `1`, "ok"},
	{"oneOf none", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `1.5`, "<root> oneOf"},
	{"oneOf two", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`, "<root> oneOf"},
	{"not ok", `{"not":{"type":"string"}}`, `1`, "ok"},
	{"not bad", `{"not":{"type":"string"}}`, `"a"`, "<root> not"},
	{"if then", `{"if":{"properties":{"kind":{"const":"n"}}},"then":{"properties":{"v":{"type":"number"}}},"else":{"properties":{"v":{"type":"string"}}}}`, `{"kind":"n","v":"x"}`, "v type"},
	{"if else", `{"if":{"properties":{"kind":{"const":"n"}}},"then":{"properties":{"v":{"type":"number"}}},"else":{"properties":{"v":{"type":"string"}}}}`, `{"kind":"s","v":1}`, "v type"},
	{"if ok", `{"if":{"properties":{"kind":{"const":"n"}}},"then":{"properties":{"v":{"type":"number"}}},"else":{"properties":{"v":{"type":"string"}}}}`, `{"kind":"n","v":1}`, "ok"},
	{"if without branches", `{"if":false}`, `1`, "ok"},
	{"then without if", `{"then":false}`, `1`, "ok"},
	{"then false", `{"if":true,"then":false}`, `1`, "<root> schema"},

	// boolean schemas
	{"true schema", `true`, `{"a":[1]}`, "ok"},
	{"false schema", `false`, `null`, "<root> schema"},
	{"false property", `{"properties":{"a":false}}`, `{"a":1}`, "<root> schema"},
	{"false nested property", `{"properties":{"a":{"properties":{"b":false}}}}`, `{"a":{"b":1}}`, "a schema"},
	{"false prefixItem", `{"properties":{"l":{"prefixItems":[{},false]}}}`, `{"l":[1,2]}`, "l schema"},
	{"false patternProperty", `{"patternProperties":{"^x":false}}`, `{"xa":1}`, "<root> schema"},
	{"false additionalProperties nested", `{"additionalProperties":{"additionalProperties":false}}`, `{"o":{"p":1}}`, "o additionalProperties"},
	{"false property absent", `{"properties":{"a":false}}`, `{"b":1}`, "ok"},

	// $ref
	{"ref defs", `{"properties":{"a":{"$ref":"#/$defs/pos"}},"$defs":{"pos":{"type":"integer","exclusiveMinimum":0}}}`, `{"a":0}`, "a exclusiveMinimum"},
	{"ref definitions", `{"properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`, `{"a":0}`, "a type"},
	{"ref escaped", `{"$defs":{"a/b~c d":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a~1b~0c%20d"}}}`, `{"x":1}`, "x type"},
	{"ref to property", `{"properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, `{"a":"x","b":2}`, "b type"},
	{"ref to array element", `{"allOf":[{"type":"string"}],"properties":{"b":{"$ref":"#/allOf/0"}}}`, `{"b":2}`, "<root> type"},
	{"ref root recursion", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`, `{"name":"a","children":[{"name":"b","children":[{"name":"c","children":[{}]}]}]}`, "children.0.children.0.children.0 required"},
	{"ref root recursion ok", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`, `{"name":"a","children":[{"name":"b","children":[]}]}`, "ok"},
	{"ref mutual recursion", `{"$defs":{"a":{"type":"array","items":{"$ref":"#/$defs/b"}},"b":{"anyOf":[{"type":"integer"},{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `[1,[2,[3,[4]]],[["x"]]]`, "2 anyOf"},
	{"ref python index", `{"x-list":[{"type":"string"},{}],"properties":{"a":{"$ref":"#/x-list/00"},"b":{"$ref":"#/x-list/-1"}}}`, `{"a":1,"b":1}`, "a type"},
	{"ref negative index", `{"x-list":[{"type":"string"},{}],"properties":{"a":{"$ref":"#/x-list/00"},"b":{"$ref":"#/x-list/-2"}}}`, `{"a":"x","b":1}`, "b type"},
	{"ref false", `{"$defs":{"no":false},"properties":{"a":{"$ref":"#/$defs/no"}}}`, `{"a":1}`, "a schema"},

	// unevaluatedProperties and unevaluatedItems
	{"uP false", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":2}`, "<root> unevaluatedProperties"},
	{"uP false ok", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1}`, "ok"},
	{"uP after required", `{"properties":{"a":{}},"required":["z"],"unevaluatedProperties":false}`, `{"b":1}`, "<root> required"},
	{"uP allOf", `{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1}`, "ok"},
	{"uP allOf extra", `{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1,"b":1}`, "<root> unevaluatedProperties"},
	{"uP failed anyOf branch", `{"anyOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}],"unevaluatedProperties":false}`, `{"a":1,"b":1}`, "<root> unevaluatedProperties"},
	{"uP anyOf", `{"anyOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{}},"required":["b"]}],"unevaluatedProperties":false}`, `{"a":"x","b":1}`, "ok"},
	{"uP ref", `{"$defs":{"base":{"properties":{"a":{}}}},"$ref":"#/$defs/base","unevaluatedProperties":false}`, `{"a":1}`, "ok"},
	{"uP schema", `{"properties":{"a":{}},"unevaluatedProperties":{"type":"string"}}`, `{"a":1,"b":"x"}`, "ok"},
	{"uP schema bad", `{"properties":{"a":{}},"unevaluatedProperties":{"type":"string"}}`, `{"a":1,"b":2}`, "<root> unevaluatedProperties"},
	{"uP if then", `{"if":{"properties":{"k":{"const":1}}},"then":{"properties":{"x":{}}},"unevaluatedProperties":false}`, `{"k":1,"x":1}`, "ok"},
	{"uP if failed", `{"if":{"properties":{"k":{"const":1}}},"then":{"properties":{"x":{}}},"unevaluatedProperties":false}`, `{"k":2,"x":1}`, "<root> unevaluatedProperties"},
	{"uP patternProperties", `{"patternProperties":{"^x":{}},"unevaluatedProperties":false}`, `{"xa":1}`, "ok"},
	{"uP dependentSchemas", `{"dependentSchemas":{"a":{"properties":{"b":{}}}},"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":2}`, "ok"},
	{"uP nested", `{"properties":{"o":{"properties":{"a":{}},"unevaluatedProperties":false}}}`, `{"o":{"b":1}}`, "o unevaluatedProperties"},
	{"uP additionalProperties true", `{"additionalProperties":true,"unevaluatedProperties":false}`, `{"b":1}`, "ok"},
	{"uI prefix", `{"prefixItems":[{}],"unevaluatedItems":false}`, `[1]`, "ok"},
	{"uI prefix extra", `{"prefixItems":[{}],"unevaluatedItems":false}`, `[1,2]`, "<root> unevaluatedItems"},
	{"uI allOf", `{"allOf":[{"prefixItems":[{},{}]}],"unevaluatedItems":false}`, `[1,2]`, "ok"},
	{"uI contains", `{"contains":{"type":"string"},"unevaluatedItems":{"type":"integer"}}`, `["a",1]`, "ok"},
	{"uI contains bad", `{"contains":{"type":"string"},"unevaluatedItems":{"type":"integer"}}`, `["a",1.5]`, "<root> unevaluatedItems"},
	{"uI items", `{"items":{"type":"integer"},"unevaluatedItems":false}`, `[1,2]`, "ok"},

	// annotations are ignored, defaults never injected
	{"annotations", `{"title":"t","description":"d","default":5,"examples":[1],"$comment":"c","readOnly":true,"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.com/s","x-vendor":{"type":"bogus"}}`, `"anything"`, "ok"},
	{"default not injected", `{"properties":{"note":{"type":"string","default":"n"}},"required":["note"]}`, `{}`, "<root> required"},
	{"unknown keyword", `{"foo":[1,2]}`, `1`, "ok"},
}

func TestValidate(t *testing.T) {
	for _, tc := range validateCases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustCompile(t, tc.schema)
			got := render(s.Validate(decode(t, tc.instance)))
			if got != tc.want {
				t.Errorf("schema %s\ninstance %s\ngot  %s\nwant %s", tc.schema, tc.instance, got, tc.want)
			}
		})
	}
}

// TestValidateGoNumbers checks the tolerated non-json.Number numbers.
func TestValidateGoNumbers(t *testing.T) {
	s := mustCompile(t, `{"properties":{"i":{"type":"integer","minimum":1,"multipleOf":2},"f":{"type":"number","maximum":0.5},"e":{"enum":[3]}}}`)
	cases := []struct {
		inst map[string]any
		want string
	}{
		{map[string]any{"i": 2, "f": 0.5, "e": int64(3)}, "ok"},
		{map[string]any{"i": 2.0, "f": float32(0.25), "e": 3.0}, "ok"},
		{map[string]any{"i": 2.5}, "i multipleOf"},
		{map[string]any{"i": "2"}, "i type"},
		{map[string]any{"i": 0}, "i minimum"},
		{map[string]any{"i": uint64(3)}, "i multipleOf"},
		{map[string]any{"f": 0.51}, "f maximum"},
		{map[string]any{"e": 3.5}, "e enum"},
		{map[string]any{"i": struct{}{}}, "i type"},
	}
	for _, tc := range cases {
		if got := render(s.Validate(tc.inst)); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.inst, got, tc.want)
		}
	}
}

type ccase struct {
	name, schema, keyword, path string
}

var compileErrorCases = []ccase{
	{"not a schema", `5`, "type", ""},
	{"type typo", `{"type":"strnig"}`, "type", "/type"},
	{"type number", `{"type":1}`, "type", "/type"},
	{"type empty list", `{"type":[]}`, "type", "/type"},
	{"type duplicate", `{"type":["string","string"]}`, "type", "/type"},
	{"nested type", `{"properties":{"a":{"type":"float"}}}`, "type", "/properties/a/type"},
	{"minimum string", `{"minimum":"x"}`, "minimum", "/minimum"},
	{"maximum bool", `{"maximum":true}`, "maximum", "/maximum"},
	{"exclusiveMinimum null", `{"exclusiveMinimum":null}`, "exclusiveMinimum", "/exclusiveMinimum"},
	{"multipleOf zero", `{"multipleOf":0}`, "multipleOf", "/multipleOf"},
	{"multipleOf negative", `{"multipleOf":-2}`, "multipleOf", "/multipleOf"},
	{"minLength negative", `{"minLength":-1}`, "minLength", "/minLength"},
	{"maxLength fraction", `{"maxLength":1.5}`, "maxLength", "/maxLength"},
	{"minItems string", `{"minItems":"1"}`, "minItems", "/minItems"},
	{"maxProperties negative", `{"maxProperties":-3}`, "maxProperties", "/maxProperties"},
	{"minContains", `{"minContains":-1}`, "minContains", "/minContains"},
	{"required string", `{"required":"a"}`, "required", "/required"},
	{"required number", `{"required":[1]}`, "required", "/required"},
	{"required duplicate", `{"required":["a","a"]}`, "required", "/required"},
	{"enum object", `{"enum":{"a":1}}`, "enum", "/enum"},
	{"pattern lookahead", `{"pattern":"(?=a)"}`, "pattern", "/pattern"},
	{"pattern number", `{"pattern":1}`, "pattern", "/pattern"},
	{"patternProperties regex", `{"patternProperties":{"(":{}}}`, "patternProperties", "/patternProperties/("},
	{"format number", `{"format":1}`, "format", "/format"},
	{"uniqueItems string", `{"uniqueItems":"yes"}`, "uniqueItems", "/uniqueItems"},
	{"properties array", `{"properties":[]}`, "properties", "/properties"},
	{"property not schema", `{"properties":{"a":1}}`, "properties", "/properties/a"},
	{"items array", `{"items":[{}]}`, "items", "/items"},
	{"prefixItems empty", `{"prefixItems":[]}`, "prefixItems", "/prefixItems"},
	{"allOf empty", `{"allOf":[]}`, "allOf", "/allOf"},
	{"anyOf object", `{"anyOf":{}}`, "anyOf", "/anyOf"},
	{"oneOf element", `{"oneOf":[{},3]}`, "oneOf", "/oneOf/1"},
	{"not string", `{"not":"x"}`, "not", "/not"},
	{"additionalProperties string", `{"additionalProperties":"no"}`, "additionalProperties", "/additionalProperties"},
	{"dependentRequired", `{"dependentRequired":{"a":"b"}}`, "dependentRequired", "/dependentRequired"},
	{"dependentSchemas", `{"dependentSchemas":{"a":[]}}`, "dependentSchemas", "/dependentSchemas/a"},
	{"defs invalid", `{"$defs":{"x":{"minimum":"0"}}}`, "minimum", "/$defs/x/minimum"},
	{"then invalid", `{"then":{"type":"x"}}`, "type", "/then/type"},
	{"unevaluatedProperties", `{"unevaluatedProperties":{"type":"x"}}`, "type", "/unevaluatedProperties/type"},
	{"unevaluatedItems", `{"unevaluatedItems":1}`, "unevaluatedItems", "/unevaluatedItems"},
	{"title number", `{"title":1}`, "title", "/title"},
	{"description", `{"properties":{"a":{"description":false}}}`, "description", "/properties/a/description"},
	{"examples", `{"examples":1}`, "examples", "/examples"},
	{"readOnly", `{"readOnly":"yes"}`, "readOnly", "/readOnly"},
	{"ref unresolved", `{"$ref":"#/$defs/missing"}`, "$ref", "/$ref"},
	{"ref number", `{"$ref":1}`, "$ref", "/$ref"},
	{"ref external", `{"$ref":"other.json#/a"}`, "$ref", "/$ref"},
	{"ref anchor", `{"$ref":"#foo"}`, "$ref", "/$ref"},
	{"ref not a schema", `{"definitions":{"n":3},"$ref":"#/definitions/n"}`, "$ref", "/$ref"},
	{"ref bad index", `{"allOf":[{}],"properties":{"a":{"$ref":"#/allOf/x"}}}`, "$ref", "/properties/a/$ref"},
	{"ref index out of range", `{"allOf":[{}],"properties":{"a":{"$ref":"#/allOf/-2"}}}`, "$ref", "/properties/a/$ref"},
	{"ref self cycle", `{"$ref":"#"}`, "$ref", "/$ref"},
	{"ref mutual cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "$ref", "/$defs/b/allOf/0/$ref"},
	{"ref cycle through items", `{"$defs":{"a":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/a"}]}},"items":{"$ref":"#/$defs/a"}}`, "$ref", "/$defs/a/anyOf/1/$ref"},
	{"ref cycle through not", `{"not":{"$ref":"#"}}`, "$ref", "/not/$ref"},
	{"first error alphabetical", `{"type":"x","minimum":"y"}`, "minimum", "/minimum"},
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range compileErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(decode(t, tc.schema))
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%s) = %v, want a CompileError", tc.schema, err)
			}
			if ce.Keyword != tc.keyword || ce.Path != tc.path {
				t.Errorf("Compile(%s) = {%q %q}, want {%q %q}", tc.schema, ce.Keyword, ce.Path, tc.keyword, tc.path)
			}
			if ce.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestCompileValid(t *testing.T) {
	for _, s := range []string{
		`{}`, `true`, `false`,
		`{"type":["integer","null"],"minimum":1.5,"maxLength":1e2,"minItems":2.0}`,
		`{"properties":{"a":{"$ref":"#"}},"$defs":{"x":true,"y":{"$ref":"#/$defs/x"}}}`,
		`{"$ref":"#/$defs/x","$defs":{"x":{"properties":{"next":{"$ref":"#/$defs/x"}}}}}`,
		`{"dependencies":{"a":["b"],"c":{"type":"object"}},"unevaluatedProperties":false,"unevaluatedItems":{},"contentSchema":{}}`,
		`{"$anchor":"a1","$dynamicAnchor":"meta","$vocabulary":{"x":true},"deprecated":false}`,
		`{"contains":{},"minContains":0,"maxContains":100000000000000000000}`,
		`{"required":[],"enum":[]}`,
		`{"$defs":{"loop":{"$ref":"#/$defs/loop"},"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"$ref":"#/$defs/a"}}}`,
	} {
		if _, err := Compile(decode(t, s)); err != nil {
			t.Errorf("Compile(%s): %v", s, err)
		}
	}
}

func TestValidationErrorMessage(t *testing.T) {
	s := mustCompile(t, `{"properties":{"values":{"items":{"type":"integer"}}},"required":["values"]}`)
	e := s.Validate(decode(t, `{"values":[1,"secret-value"]}`))
	if got, want := e.Error(), "input at 'values.1' violates the 'type' constraint"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if strings.Contains(e.Error(), "secret") {
		t.Error("message leaks the value")
	}
	e = s.Validate(decode(t, `{}`))
	if got, want := e.Error(), "input at '<root>' violates the 'required' constraint"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestConcurrent validates from many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	s := mustCompile(t, benchSchema)
	good, bad := decode(t, benchGood), decode(t, `{"name":"","age":-1}`)
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				if e := s.Validate(good); e != nil {
					t.Errorf("good: %v", e)
				}
				if e := s.Validate(bad); e == nil || e.Keyword != "minimum" {
					t.Errorf("bad: %v", e)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

func TestDecimal(t *testing.T) {
	cmp := []struct {
		a, b string
		want int
	}{
		{"1", "1.0", 0}, {"0", "-0.0", 0}, {"1e2", "100", 0}, {"0.1", "1e-1", 0},
		{"1", "2", -1}, {"-1", "-2", 1}, {"10", "9.99", 1}, {"0.001", "0.01", -1},
		{"-0.5", "0", -1}, {"123.456", "123.4561", -1}, {"1e40", "9e39", 1},
		{"00012", "12", 0}, {"1E+2", "100", 0},
	}
	for _, c := range cmp {
		x, ok1 := parseDec(c.a)
		y, ok2 := parseDec(c.b)
		if !ok1 || !ok2 {
			t.Fatalf("parse %s %s", c.a, c.b)
		}
		if got := cmpDec(&x, &y); got != c.want {
			t.Errorf("cmp(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for _, bad := range []string{"", "-", "1.", ".5", "1e", "1e+", "abc", "1x", "--1"} {
		if _, ok := parseDec(bad); ok {
			t.Errorf("parseDec(%q) succeeded", bad)
		}
	}
}

const benchSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "minLength": 1, "maxLength": 64},
		"age": {"type": "integer", "minimum": 0},
		"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
	},
	"required": ["name", "age"],
	"additionalProperties": false
}`

const benchGood = `{"name": "Ada", "age": 36, "tags": ["math", "engines"]}`

func BenchmarkValidate(b *testing.B) {
	s := mustCompile(b, benchSchema)
	for _, bc := range []struct{ name, inst string }{
		{"valid", benchGood},
		{"invalid", `{"name": "Ada", "age": -1}`},
	} {
		inst := decode(b, bc.inst)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.Validate(inst)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	raw := decode(b, benchSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzValidate compiles arbitrary JSON schemas and validates arbitrary JSON
// instances: neither may panic or hang, and validation is deterministic.
func FuzzValidate(f *testing.F) {
	for _, tc := range validateCases {
		f.Add([]byte(tc.schema), []byte(tc.instance))
	}
	for _, tc := range compileErrorCases {
		f.Add([]byte(tc.schema), []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		sv, ok := fuzzDecode(schema)
		if !ok {
			return
		}
		s, err := Compile(sv)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) || ce.Keyword == "" {
				t.Fatalf("Compile error %v is not a CompileError with a keyword", err)
			}
			return
		}
		iv, ok := fuzzDecode(instance)
		if !ok {
			return
		}
		first := render(s.Validate(iv))
		if again := render(s.Validate(iv)); again != first {
			t.Fatalf("non-deterministic: %s then %s", first, again)
		}
		if first == "ok" {
			return
		}
		if e := s.Validate(iv); e.Keyword == "" || e.Keyword == "quick" {
			t.Fatalf("bad keyword %q", e.Keyword)
		}
	})
}

func fuzzDecode(data []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}
