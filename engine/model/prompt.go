package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/treelang/treelang/engine"
)

// The system prompt is fixed text: the same question and tools always give
// byte-identical requests, so a recorded ask replays. Change it only on
// purpose, knowing that recorded fixtures of asks stop matching.

const promptIntro = `You write programs in Treelang, a JSON language of tool calls. A program is one JSON object: an abstract syntax tree that is executed locally and calls the tools listed at the end. You answer a question by writing the program that computes the answer; you never compute the answer yourself.
`

const promptV1 = `Schema version 1.0. Every node is an object whose "type" field selects its kind; no other fields than those shown are allowed.
- program: {"type": "program", "schema_version": "1.0", "name": string or null, "description": string or null, "mode": "single" or "parallel", "body": [node, ...]}. The root is a program. With one body node the result is that node's value; with several, the list of their values. Use "parallel" when the body has independent nodes, "single" otherwise.
- function: {"type": "function", "name": TOOL, "params": [node, ...]} calls a tool. Params are positional: the first param is bound to the tool's first property, the second to the second, and so on, in the order the tool's "properties" are listed. Give one param per property; only when a tool has an "input_schema" may trailing properties that it does not require be left out.
- value: {"type": "value", "name": NAME, "value": JSON} is a literal. "name" is the property it fills or the lambda parameter it stands for. "value" is required and may be null.
- conditional: {"type": "conditional", "condition": node, "true_branch": node, "false_branch": node or null}. Only the chosen branch runs. null, false, 0, "", [] and {} are false; everything else is true.
- lambda: {"type": "lambda", "params": [NAME, ...], "body": function node}. It appears only as the "function" of map, filter and reduce.
- map: {"type": "map", "function": lambda with exactly 1 param, "iterable": node} applies the lambda to every item of the list.
- filter: {"type": "filter", "function": lambda with exactly 1 param, "iterable": node} keeps the items for which the lambda's result is true.
- reduce: {"type": "reduce", "function": lambda with exactly 2 params [accumulator, item], "iterable": node} folds the list into one value.

Rules:
1. Inside a lambda's body, a lambda parameter is written as a value node named after the parameter with value null: {"type": "value", "name": "x", "value": null}. Every parameter must be referenced this way, every null value must name a parameter of the enclosing lambda, and no other value node in the body may have a parameter's name.
2. In reduce, if the accumulator's value node is null the first item is the starting value; a non-null value (such as 0) is the starting value instead. A reduce of an empty list is null.
3. The iterable of map, filter and reduce must produce a JSON array, never an object or a string.
4. Any param, condition, branch or iterable may itself be a function call, conditional, map, filter or reduce.
`

const promptV2 = `Schema version 2.0. A program is a root object; every expression is an object whose "type" field selects its kind; no other fields than those shown are allowed. IDENT is a name matching ^[A-Za-z_][A-Za-z0-9_]*$.
- program (the root): {"type": "program", "schema_version": "2.0", "name": string or null, "description": string or null, "mode": "single" or "parallel", "definitions": [definition, ...], "body": [expression, ...]}. The body has at least one expression. With one body expression the result is its value; with several, the list of their values. Use "parallel" when the body has independent expressions, "single" otherwise.
- definition: {"name": IDENT, "params": [IDENT, ...], "body": expression} defines a user function. Definitions may call each other and themselves.
- literal: {"type": "literal", "value": JSON} is a constant.
- variable: {"type": "variable", "name": IDENT} is a parameter of the enclosing definition.
- tool_call: {"type": "tool_call", "tool": TOOL, "arguments": {PROPERTY: expression, ...}} calls a tool with named arguments: the keys are the tool's property names.
- call: {"type": "call", "function": IDENT, "arguments": [expression, ...]} calls a user function with one positional argument per declared parameter.
- conditional: {"type": "conditional", "condition": expression, "true_branch": expression, "false_branch": expression}; all three are required. Only the chosen branch runs. null, false, 0, "", [] and {} are false; everything else is true.
- memo: {"type": "memo", "key": IDENT, "expression": expression} computes the expression once per run and reuses its value wherever the same key appears.

Rules:
1. Variables exist only inside a definition's body and must name one of its params; the program body has no variables.
2. There are no loops or lambdas: repeat work with recursive definitions and conditionals.
3. A memo's expression contains no variables, and one key always stands for the same expression.
4. Any argument, condition or branch may itself be a tool_call, call, conditional or memo.
`

// exampleTools are the tools the worked examples use.
const exampleTools = `[
{"name": "add", "description": "Add two numbers.", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
{"name": "subtract", "description": "Subtract b from a.", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
{"name": "multiply", "description": "Multiply two numbers.", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
{"name": "greater_than", "description": "Whether a is greater than b.", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
{"name": "is_even", "description": "Whether n is even.", "properties": {"n": {"type": "integer"}}}
]`

// example is one worked question and its program.
type example struct {
	Question string
	Program  string
}

var examplesV1 = []example{
	{
		Question: "What is 12 times 6, plus 4?",
		Program: `{"type": "program", "schema_version": "1.0", "name": null, "description": null, "mode": "single", "body": [
  {"type": "function", "name": "add", "params": [
    {"type": "function", "name": "multiply", "params": [{"type": "value", "name": "a", "value": 12}, {"type": "value", "name": "b", "value": 6}]},
    {"type": "value", "name": "b", "value": 4}]}]}`,
	},
	{
		Question: "What is the sum of the even numbers among 3, 8, 11 and 14?",
		Program: `{"type": "program", "schema_version": "1.0", "name": "sum_of_evens", "description": "Sum the even numbers of a list.", "mode": "single", "body": [
  {"type": "reduce",
   "function": {"type": "lambda", "params": ["total", "item"], "body": {"type": "function", "name": "add", "params": [{"type": "value", "name": "total", "value": null}, {"type": "value", "name": "item", "value": null}]}},
   "iterable": {"type": "filter",
     "function": {"type": "lambda", "params": ["n"], "body": {"type": "function", "name": "is_even", "params": [{"type": "value", "name": "n", "value": null}]}},
     "iterable": {"type": "value", "name": "numbers", "value": [3, 8, 11, 14]}}}]}`,
	},
	{
		Question: "Double each of 1, 2 and 3. Also, if 15 is greater than 10, subtract 10 from 15, otherwise add 10 to it.",
		Program: `{"type": "program", "schema_version": "1.0", "name": null, "description": null, "mode": "parallel", "body": [
  {"type": "map",
   "function": {"type": "lambda", "params": ["x"], "body": {"type": "function", "name": "multiply", "params": [{"type": "value", "name": "x", "value": null}, {"type": "value", "name": "b", "value": 2}]}},
   "iterable": {"type": "value", "name": "numbers", "value": [1, 2, 3]}},
  {"type": "conditional",
   "condition": {"type": "function", "name": "greater_than", "params": [{"type": "value", "name": "a", "value": 15}, {"type": "value", "name": "b", "value": 10}]},
   "true_branch": {"type": "function", "name": "subtract", "params": [{"type": "value", "name": "a", "value": 15}, {"type": "value", "name": "b", "value": 10}]},
   "false_branch": {"type": "function", "name": "add", "params": [{"type": "value", "name": "a", "value": 15}, {"type": "value", "name": "b", "value": 10}]}}]}`,
	},
}

var examplesV2 = []example{
	{
		Question: "What is 12 times 6, plus 4?",
		Program: `{"type": "program", "schema_version": "2.0", "name": null, "description": null, "mode": "single", "definitions": [], "body": [
  {"type": "tool_call", "tool": "add", "arguments": {
    "a": {"type": "tool_call", "tool": "multiply", "arguments": {"a": {"type": "literal", "value": 12}, "b": {"type": "literal", "value": 6}}},
    "b": {"type": "literal", "value": 4}}}]}`,
	},
	{
		Question: "What is 3 squared plus 4 squared?",
		Program: `{"type": "program", "schema_version": "2.0", "name": null, "description": null, "mode": "single",
 "definitions": [{"name": "square", "params": ["x"], "body": {"type": "tool_call", "tool": "multiply", "arguments": {"a": {"type": "variable", "name": "x"}, "b": {"type": "variable", "name": "x"}}}}],
 "body": [
  {"type": "tool_call", "tool": "add", "arguments": {
    "a": {"type": "call", "function": "square", "arguments": [{"type": "literal", "value": 3}]},
    "b": {"type": "call", "function": "square", "arguments": [{"type": "literal", "value": 4}]}}}]}`,
	},
	{
		Question: "What is the factorial of 5?",
		Program: `{"type": "program", "schema_version": "2.0", "name": "factorial", "description": "n! by recursion.", "mode": "single",
 "definitions": [{"name": "factorial", "params": ["n"], "body": {"type": "conditional",
   "condition": {"type": "tool_call", "tool": "greater_than", "arguments": {"a": {"type": "variable", "name": "n"}, "b": {"type": "literal", "value": 1}}},
   "true_branch": {"type": "tool_call", "tool": "multiply", "arguments": {
     "a": {"type": "variable", "name": "n"},
     "b": {"type": "call", "function": "factorial", "arguments": [{"type": "tool_call", "tool": "subtract", "arguments": {"a": {"type": "variable", "name": "n"}, "b": {"type": "literal", "value": 1}}}]}}},
   "false_branch": {"type": "literal", "value": 1}}}],
 "body": [{"type": "call", "function": "factorial", "arguments": [{"type": "literal", "value": 5}]}]}`,
	},
}

// systemPrompt explains the schema version, shows the worked examples and
// lists the tools, one JSON definition per line, properties in order.
func systemPrompt(version string, tools []*engine.ToolDefinition) (string, error) {
	var b strings.Builder
	b.WriteString(promptIntro)
	b.WriteString("\n")
	examples := examplesV1
	if version == "2.0" {
		b.WriteString(promptV2)
		examples = examplesV2
	} else {
		b.WriteString(promptV1)
	}
	b.WriteString("\nWorked examples. They use these example tools, which may not be available to you:\n")
	b.WriteString(exampleTools)
	b.WriteString("\n")
	for i, ex := range examples {
		fmt.Fprintf(&b, "\nExample %d. Question: %s\nProgram:\n%s\n", i+1, ex.Question, ex.Program)
	}
	b.WriteString("\nThe available tools, as JSON definitions (use only these, with their exact names")
	if version == "2.0" {
		b.WriteString("; the argument names are the property names")
	} else {
		b.WriteString("; the order of \"properties\" is the order of the positional params")
	}
	b.WriteString("):\n")
	if len(tools) == 0 {
		b.WriteString("[]\n")
	} else {
		b.WriteString("[\n")
		for i, t := range tools {
			if t == nil {
				return "", engine.Errorf(engine.ValueError, "tool definition %d is nil", i)
			}
			data, err := json.Marshal(t)
			if err != nil {
				return "", engine.Errorf(engine.ValueError, "tool '%s' cannot be written as JSON: %v", t.Name, err)
			}
			b.Write(data)
			if i < len(tools)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("]\n")
	}
	fmt.Fprintf(&b, "\nReply with one JSON object only: the schema %s program that answers the user's question. No explanation, no Markdown.", version)
	return b.String(), nil
}

// repairMessage is the user message that feeds a validation error back.
func repairMessage(err error) string {
	return "Your program was invalid: " + err.Error() + "\nReply with the corrected JSON only."
}

// maxCandidates caps how many '{' positions extractObject tries in one
// piece of text, so a long malformed reply costs linear time.
const maxCandidates = 64

// extractObject finds the program in a model's reply: the first JSON object
// inside a Markdown code fence, or else the first in the whole text, with
// any prose around it ignored. The object's bytes are returned unchanged.
func extractObject(reply string) ([]byte, error) {
	var firstErr error
	for _, text := range append(fencedBlocks(reply), reply) {
		obj, err := firstObject(text)
		if err == nil {
			return obj, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// firstObject returns the first complete JSON object in text: the
// outermost one, since any object nested in it starts later.
func firstObject(text string) ([]byte, error) {
	var firstErr error
	tried := 0
	for i := 0; i < len(text) && tried < maxCandidates; i++ {
		if text[i] != '{' {
			continue
		}
		tried++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return bytes.TrimSpace(raw), nil
	}
	if firstErr == nil {
		return nil, fmt.Errorf("the reply contains no JSON object")
	}
	return nil, fmt.Errorf("the reply is not valid JSON: %v", firstErr)
}

// fencedBlocks returns the contents of the Markdown code fences in text,
// in order; an unclosed fence runs to the end.
func fencedBlocks(text string) []string {
	var blocks []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return blocks
		}
		rest := text[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return blocks
		}
		body := rest[nl+1:]
		j := strings.Index(body, "```")
		if j < 0 {
			return append(blocks, body)
		}
		blocks = append(blocks, body[:j])
		text = body[j+3:]
	}
}
