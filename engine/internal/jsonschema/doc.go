// Package jsonschema validates tool arguments against JSON Schema draft
// 2020-12, reporting the first failure in the Python library's order.
package jsonschema
