// Package jsonschema validates tool arguments against JSON Schema draft
// 2020-12, reporting the first failure in the Python library's order.
//
// # Contract
//
// Compile checks a decoded JSON schema as the draft 2020-12 metaschema would
// for the supported keywords and compiles it once into a tree of small
// closures; a *Schema is immutable and safe for concurrent use. An invalid
// schema gives a *CompileError naming the offending keyword of the schema
// itself (for example "type" for "type": "strnig", "pattern" for a pattern
// RE2 cannot compile, "$ref" for a reference that does not resolve) and its
// JSON pointer. Keywords are checked in alphabetical order, depth first, and
// the first problem is reported.
//
// Validate returns nil or the first failure, in the order of the Python
// library, which validates against a canonicalized schema (keys sorted at
// every level): keywords apply in alphabetical order (additionalProperties <
// properties < required < type; minimum < type), properties in name order,
// array items in index order, depth first. The failure carries the instance
// path and the innermost failing keyword: applicators that descend into
// subschemas ($ref, allOf, properties, patternProperties, additionalProperties
// with a schema, items, prefixItems, dependentSchemas, if/then/else,
// propertyNames) report the keyword that failed inside and where it failed.
// anyOf, oneOf and not report themselves at the current path (this is what
// Python's first error carries; its best_match heuristic is not used).
// contains reports "contains" when no item matches and "minContains" or
// "maxContains" when the count is off. items: false and additionalProperties:
// false report themselves at the array or object; any other false subschema
// reports "schema" (Python's error has no keyword and prints "schema") at
// its parent's location (Python adds no path segment for it, so
// {"properties": {"a": false}} fails at the root, not at "a").
// When several object members fail the same keyword (additionalProperties or
// patternProperties with a schema, propertyNames), the name that sorts first
// is reported: Go maps have no order (Python follows insertion order, or set
// order for additionalProperties).
//
// A valid instance is checked without allocating (json.Number numbers are
// compared as exact decimals in place); a failure allocates its error.
//
// # Keywords
//
// Asserted: type, enum, const, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, minLength, maxLength, pattern, format,
// minItems, maxItems, uniqueItems, items, prefixItems, contains (with
// minContains and maxContains), properties, patternProperties,
// additionalProperties, propertyNames, required, minProperties,
// maxProperties, dependentRequired, dependentSchemas, allOf, anyOf, oneOf,
// not, if/then/else, $ref, unevaluatedProperties, unevaluatedItems, and the
// boolean schemas true and false. unevaluatedProperties and
// unevaluatedItems report themselves at the object or array and follow
// Python's annotation collection (properties, patternProperties,
// additionalProperties, items, prefixItems, contains, and the valid
// branches of allOf, anyOf, oneOf, if/then/else, dependentSchemas, $ref).
//
// Numbers compare by exact value: 1 equals 1.0, "integer" accepts 1.0 and
// 2e3, booleans are never numbers, multipleOf is exact (0.3 is a multiple of
// 0.1). Lengths count Unicode code points. pattern and patternProperties use
// Go's RE2 syntax with search (unanchored) semantics.
//
// Formats asserted on strings (other formats always pass), as Python's
// FormatChecker() checks them: date (YYYY-MM-DD, a real date, year 1 on),
// date-time (RFC 3339, "T" and "Z" in either case, no leap second, one
// trailing newline tolerated), time (Python really applies the draft 3
// checker, strptime "%H:%M:%S": one or two digits per field, no fraction or
// offset), email and idn-email (contain "@"), ipv4 and ipv6 (no zones, no
// leading zeros), uuid (8-4-4-4-12 hex digits), json-pointer,
// relative-json-pointer, regex (compiles in RE2) and uri (an absolute RFC
// 3986 URI; Python asserts it only when rfc3987 or rfc3986-validator is
// installed).
//
// Deliberate differences from Python, whose numbers are floats: numbers
// here are exact, so 9007199254740993.0 is not 9007199254740992, 0.3 is a
// multiple of 0.1, and 1e400 is a large integer, not infinity.
//
// $ref accepts "#" and local "#/..." JSON pointers into the root schema
// (the engine rejects external references first). Recursive references
// work; a reference cycle that never descends into the instance (such as
// {"$ref": "#"}) is a CompileError for "$ref" when the root can reach it,
// instead of the endless recursion (Python's RecursionError) it leads to.
//
// Annotations (title, description, default, examples, $schema, $id,
// $comment, readOnly, deprecated, content*, ...) are checked for shape and
// otherwise ignored; defaults are never injected.
//
// Not supported: $dynamicRef, $anchor lookups and $id base-URI changes (all
// references resolve against the root).
package jsonschema
