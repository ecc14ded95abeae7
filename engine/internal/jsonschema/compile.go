package jsonschema

import (
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// check applies one keyword to an instance. In quick mode (q) a failure is
// reported as the shared errQuick sentinel, without building a path: the
// caller only needs to know whether the instance is valid.
type check func(q bool, inst any) *ValidationError

// node is a compiled schema: its keyword checks in alphabetical order.
type node struct {
	ptr    string
	checks []check
	edges  []edge  // subschemas applied to the same instance (cycle check)
	ann    *annot  // for unevaluated*; nil for boolean schemas
	refTo  *node   // target of $ref
	kids   []*node // every subschema the node applies (reachability)
	// isFalse marks the boolean schema false.
	isFalse bool
}

type edge struct {
	to *node
	at string // pointer of the keyword that creates the edge
}

// errQuick is the failure returned in quick mode. It is never mutated and
// never escapes the package.
var errQuick = &ValidationError{Keyword: "quick"}

func (n *node) validate(q bool, inst any) *ValidationError {
	for _, c := range n.checks {
		if e := c(q, inst); e != nil {
			return e
		}
	}
	return nil
}

func (n *node) valid(inst any) bool { return n.validate(true, inst) == nil }

func fail(q bool, kw string) *ValidationError {
	if q {
		return errQuick
	}
	return &ValidationError{Keyword: kw}
}

// at records that e, a failure of sub, happened under the instance segment
// seg. Like Python's descend, a literal false subschema adds no segment:
// its failure is reported at the parent's location.
func at(q bool, e *ValidationError, sub *node, seg string) *ValidationError {
	if !q && !sub.isFalse {
		e.Path = append(e.Path, seg)
	}
	return e
}

// atIndex is at for array items; the index is formatted only on failure.
func atIndex(q bool, e *ValidationError, sub *node, i int) *ValidationError {
	if !q && !sub.isFalse {
		e.Path = append(e.Path, strconv.Itoa(i))
	}
	return e
}

type compiler struct {
	root    any
	nodes   map[string]*node // by JSON pointer, so $ref and recursion share nodes
	objects []object         // every schema object, for annotate
	uneval  bool             // an unevaluated* keyword was seen
	parent  *node            // the node whose applied keyword is compiling
}

type object struct {
	n *node
	s map[string]any
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func child(ptr, tok string) string { return ptr + "/" + escapeToken(tok) }

func cerr(kw, ptr string) *CompileError { return &CompileError{Keyword: kw, Path: ptr} }

// compile compiles the subschema raw found at ptr; kw names the keyword to
// blame when raw is not a schema at all.
func (c *compiler) compile(kw, ptr string, raw any) (*node, error) {
	n, ok := c.nodes[ptr]
	if !ok {
		switch s := raw.(type) {
		case bool:
			n = &node{ptr: ptr, isFalse: !s}
			c.nodes[ptr] = n
			if !s {
				n.checks = []check{func(q bool, _ any) *ValidationError { return fail(q, "schema") }}
			}
		case map[string]any:
			n = &node{ptr: ptr}
			c.nodes[ptr] = n
			parent := c.parent
			err := c.fill(n, s)
			c.parent = parent
			if err != nil {
				return nil, err
			}
		default:
			return nil, cerr(kw, ptr)
		}
	}
	if c.parent != nil {
		c.parent.kids = append(c.parent.kids, n)
	}
	return n, nil
}

// schemaMap compiles an object of subschemas (properties, $defs, ...) in
// name order.
func (c *compiler) schemaMap(kw, ptr string, raw any) ([]string, []*node, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, cerr(kw, ptr)
	}
	names := sortedKeys(m)
	nodes := make([]*node, len(names))
	for i, name := range names {
		n, err := c.compile(kw, child(ptr, name), m[name])
		if err != nil {
			return nil, nil, err
		}
		nodes[i] = n
	}
	return names, nodes, nil
}

// schemaArray compiles a non-empty array of subschemas (allOf, ...).
func (c *compiler) schemaArray(kw, ptr string, raw any) ([]*node, error) {
	a, ok := raw.([]any)
	if !ok || len(a) == 0 {
		return nil, cerr(kw, ptr)
	}
	nodes := make([]*node, len(a))
	for i, s := range a {
		n, err := c.compile(kw, child(ptr, strconv.Itoa(i)), s)
		if err != nil {
			return nil, err
		}
		nodes[i] = n
	}
	return nodes, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func nonNegInt(raw any) (int, bool) {
	d, ok := numberOf(raw)
	if !ok || !d.isInteger() || d.neg {
		return 0, false
	}
	if v, ok := d.int64(); ok && v <= math.MaxInt32 {
		return int(v), true
	}
	return math.MaxInt, true
}

func stringArray(raw any, unique bool) ([]string, bool) {
	a, ok := raw.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		if unique {
			for _, prev := range out[:i] {
				if prev == s {
					return nil, false
				}
			}
		}
		out[i] = s
	}
	return out, true
}

var anchorRE = regexp.MustCompile(`^[A-Za-z_][-A-Za-z0-9._]*$`)

// fill compiles the keywords of one schema object in alphabetical order,
// the order in which they are applied.
func (c *compiler) fill(n *node, s map[string]any) error {
	keys := sortedKeys(s)
	for _, kw := range keys {
		raw := s[kw]
		ptr := child(n.ptr, kw)
		c.parent = n
		switch kw {
		case "$defs", "definitions", "dependencies", "contentSchema", "then", "else":
			// Not applied by themselves (then and else are applied by
			// "if", which records them).
			c.parent = nil
		}
		chk, err := c.keyword(n, s, kw, ptr, raw)
		if err != nil {
			return err
		}
		if chk != nil {
			n.checks = append(n.checks, chk)
		}
	}
	c.objects = append(c.objects, object{n, s})
	return nil
}

// keyword validates one keyword's value and returns its check (nil for
// annotations and keywords applied by a sibling).
func (c *compiler) keyword(n *node, s map[string]any, kw, ptr string, raw any) (check, error) {
	bad := func() (check, error) { return nil, cerr(kw, ptr) }
	switch kw {
	// Core and annotations: checked for shape, never asserted.
	case "$schema", "$comment", "title", "description", "contentEncoding", "contentMediaType", "$dynamicRef":
		if _, ok := raw.(string); !ok {
			return bad()
		}
	case "$id":
		id, ok := raw.(string)
		if !ok || strings.Contains(strings.TrimSuffix(id, "#"), "#") {
			return bad()
		}
	case "$anchor", "$dynamicAnchor":
		a, ok := raw.(string)
		if !ok || !anchorRE.MatchString(a) {
			return bad()
		}
	case "$vocabulary":
		m, ok := raw.(map[string]any)
		if !ok {
			return bad()
		}
		for _, v := range m {
			if _, ok := v.(bool); !ok {
				return bad()
			}
		}
	case "deprecated", "readOnly", "writeOnly":
		if _, ok := raw.(bool); !ok {
			return bad()
		}
	case "examples":
		if _, ok := raw.([]any); !ok {
			return bad()
		}
	case "$defs", "definitions":
		if _, _, err := c.schemaMap(kw, ptr, raw); err != nil {
			return nil, err
		}
	case "dependencies":
		m, ok := raw.(map[string]any)
		if !ok {
			return bad()
		}
		for _, name := range sortedKeys(m) {
			if _, ok := stringArray(m[name], true); ok {
				continue
			}
			if _, err := c.compile(kw, child(ptr, name), m[name]); err != nil {
				return nil, err
			}
		}
	case "contentSchema", "then", "else":
		// then/else are applied by "if"; contentSchema is an annotation.
		if _, err := c.compile(kw, ptr, raw); err != nil {
			return nil, err
		}
	case "unevaluatedProperties":
		c.uneval = true
		sub, err := c.compile(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		return unevaluatedProperties(n, sub), nil
	case "unevaluatedItems":
		c.uneval = true
		if _, err := c.compile(kw, ptr, raw); err != nil {
			return nil, err
		}
		return unevaluatedItems(n), nil
	case "format":
		f, ok := raw.(string)
		if !ok {
			return bad()
		}
		if fn := formats[f]; fn != nil {
			return func(q bool, inst any) *ValidationError {
				if str, ok := inst.(string); ok && !fn(str) {
					return fail(q, "format")
				}
				return nil
			}, nil
		}

	case "$ref":
		return c.ref(n, ptr, raw)
	case "type":
		return typeCheck(kw, ptr, raw)
	case "enum":
		vals, ok := raw.([]any)
		if !ok {
			return bad()
		}
		return func(q bool, inst any) *ValidationError {
			for _, v := range vals {
				if jsonEqual(v, inst) {
					return nil
				}
			}
			return fail(q, "enum")
		}, nil
	case "const":
		return func(q bool, inst any) *ValidationError {
			if !jsonEqual(raw, inst) {
				return fail(q, "const")
			}
			return nil
		}, nil
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		lim, ok := numberOf(raw)
		if !ok {
			return bad()
		}
		return boundCheck(kw, lim), nil
	case "multipleOf":
		m, ok := numberOf(raw)
		if !ok || m.sign() <= 0 {
			return bad()
		}
		return func(q bool, inst any) *ValidationError {
			if d, ok := numberOf(inst); ok && !isMultiple(&d, &m) {
				return fail(q, kw)
			}
			return nil
		}, nil
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		lim, ok := nonNegInt(raw)
		if !ok {
			return bad()
		}
		return sizeCheck(kw, lim), nil
	case "minContains", "maxContains":
		if _, ok := nonNegInt(raw); !ok {
			return bad()
		}
	case "pattern":
		p, ok := raw.(string)
		if !ok {
			return bad()
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return bad()
		}
		return func(q bool, inst any) *ValidationError {
			if str, ok := inst.(string); ok && !re.MatchString(str) {
				return fail(q, "pattern")
			}
			return nil
		}, nil
	case "uniqueItems":
		u, ok := raw.(bool)
		if !ok {
			return bad()
		}
		if u {
			return uniqueCheck, nil
		}
	case "required":
		names, ok := stringArray(raw, true)
		if !ok {
			return bad()
		}
		return func(q bool, inst any) *ValidationError {
			if m, ok := inst.(map[string]any); ok {
				for _, name := range names {
					if _, ok := m[name]; !ok {
						return fail(q, "required")
					}
				}
			}
			return nil
		}, nil
	case "dependentRequired":
		m, ok := raw.(map[string]any)
		if !ok {
			return bad()
		}
		props := sortedKeys(m)
		deps := make([][]string, len(props))
		for i, p := range props {
			if deps[i], ok = stringArray(m[p], true); !ok {
				return bad()
			}
		}
		return func(q bool, inst any) *ValidationError {
			if obj, ok := inst.(map[string]any); ok {
				for i, p := range props {
					if _, ok := obj[p]; !ok {
						continue
					}
					for _, d := range deps[i] {
						if _, ok := obj[d]; !ok {
							return fail(q, "dependentRequired")
						}
					}
				}
			}
			return nil
		}, nil

	// Applicators.
	case "allOf", "anyOf", "oneOf":
		subs, err := c.schemaArray(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		for i, sub := range subs {
			n.edges = append(n.edges, edge{sub, child(ptr, strconv.Itoa(i))})
		}
		return combinator(kw, subs), nil
	case "not":
		sub, err := c.compile(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		n.edges = append(n.edges, edge{sub, ptr})
		return func(q bool, inst any) *ValidationError {
			if sub.valid(inst) {
				return fail(q, "not")
			}
			return nil
		}, nil
	case "if":
		return c.ifThenElse(n, s, ptr, raw)
	case "dependentSchemas":
		props, subs, err := c.schemaMap(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		for i, sub := range subs {
			n.edges = append(n.edges, edge{sub, child(ptr, props[i])})
		}
		return func(q bool, inst any) *ValidationError {
			if obj, ok := inst.(map[string]any); ok {
				for i, p := range props {
					if _, ok := obj[p]; ok {
						if e := subs[i].validate(q, inst); e != nil {
							return e
						}
					}
				}
			}
			return nil
		}, nil
	case "prefixItems":
		subs, err := c.schemaArray(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		return func(q bool, inst any) *ValidationError {
			if a, ok := inst.([]any); ok {
				for i := 0; i < len(a) && i < len(subs); i++ {
					if e := subs[i].validate(q, a[i]); e != nil {
						return atIndex(q, e, subs[i], i)
					}
				}
			}
			return nil
		}, nil
	case "items":
		return c.items(s, ptr, raw)
	case "contains":
		return c.contains(s, ptr, raw)
	case "properties":
		names, subs, err := c.schemaMap(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		return func(q bool, inst any) *ValidationError {
			if obj, ok := inst.(map[string]any); ok {
				for i, name := range names {
					if v, ok := obj[name]; ok {
						if e := subs[i].validate(q, v); e != nil {
							return at(q, e, subs[i], name)
						}
					}
				}
			}
			return nil
		}, nil
	case "patternProperties":
		return c.patternProperties(ptr, raw)
	case "additionalProperties":
		return c.additionalProperties(s, ptr, raw)
	case "propertyNames":
		sub, err := c.compile(kw, ptr, raw)
		if err != nil {
			return nil, err
		}
		return func(q bool, inst any) *ValidationError {
			obj, ok := inst.(map[string]any)
			if !ok {
				return nil
			}
			// The failing name that sorts first is reported (Go maps
			// have no order); its error carries no path segment.
			first, found := "", false
			for k := range obj {
				if !sub.valid(k) {
					if q {
						return errQuick
					}
					if !found || k < first {
						first, found = k, true
					}
				}
			}
			if found {
				return sub.validate(false, first)
			}
			return nil
		}, nil
	}
	return nil, nil
}

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "object": tObject, "array": tArray,
	"string": tString, "number": tNumber, "integer": tInteger,
}

const (
	tNull uint8 = 1 << iota
	tBool
	tObject
	tArray
	tString
	tNumber
	tInteger
)

// kindBits returns the JSON types of v; numbers are tNumber, plus tInteger
// when integral. Unknown Go types have no JSON type.
func kindBits(v any) uint8 {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case string:
		return tString
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return tNumber
		}
		if x == math.Trunc(x) {
			return tNumber | tInteger
		}
		return tNumber
	}
	if d, ok := numberOf(v); ok {
		if d.isInteger() {
			return tNumber | tInteger
		}
		return tNumber
	}
	return 0
}

func typeCheck(kw, ptr string, raw any) (check, error) {
	var mask uint8
	switch t := raw.(type) {
	case string:
		mask = typeBits[t]
	case []any:
		for _, e := range t {
			s, _ := e.(string)
			b := typeBits[s]
			if b == 0 || mask&b != 0 {
				return nil, cerr(kw, ptr)
			}
			mask |= b
		}
	}
	if mask == 0 {
		return nil, cerr(kw, ptr)
	}
	if mask&tNumber != 0 {
		mask |= tInteger
	}
	return func(q bool, inst any) *ValidationError {
		if kindBits(inst)&mask == 0 {
			return fail(q, "type")
		}
		return nil
	}, nil
}

func boundCheck(kw string, lim dec) check {
	// ok reports whether cmp(instance, limit) satisfies the keyword.
	var ok func(int) bool
	switch kw {
	case "minimum":
		ok = func(c int) bool { return c >= 0 }
	case "maximum":
		ok = func(c int) bool { return c <= 0 }
	case "exclusiveMinimum":
		ok = func(c int) bool { return c > 0 }
	default:
		ok = func(c int) bool { return c < 0 }
	}
	return func(q bool, inst any) *ValidationError {
		if d, isNum := numberOf(inst); isNum && !ok(cmpDec(&d, &lim)) {
			return fail(q, kw)
		}
		return nil
	}
}

func sizeCheck(kw string, lim int) check {
	min := strings.HasPrefix(kw, "min")
	test := func(n int) bool {
		if min {
			return n >= lim
		}
		return n <= lim
	}
	switch kw {
	case "minLength", "maxLength":
		return func(q bool, inst any) *ValidationError {
			if s, ok := inst.(string); ok && !test(runeCount(s)) {
				return fail(q, kw)
			}
			return nil
		}
	case "minItems", "maxItems":
		return func(q bool, inst any) *ValidationError {
			if a, ok := inst.([]any); ok && !test(len(a)) {
				return fail(q, kw)
			}
			return nil
		}
	}
	return func(q bool, inst any) *ValidationError {
		if m, ok := inst.(map[string]any); ok && !test(len(m)) {
			return fail(q, kw)
		}
		return nil
	}
}

// runeCount counts code points; invalid UTF-8 bytes count one each.
func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}

func uniqueCheck(q bool, inst any) *ValidationError {
	a, ok := inst.([]any)
	if !ok || len(a) < 2 {
		return nil
	}
	if len(a) <= 16 {
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				if jsonEqual(a[i], a[j]) {
					return fail(q, "uniqueItems")
				}
			}
		}
		return nil
	}
	buckets := make(map[string][]int, len(a))
	var sb strings.Builder
	for i, v := range a {
		sb.Reset()
		canonicalKey(&sb, v)
		k := sb.String()
		for _, j := range buckets[k] {
			if jsonEqual(a[j], v) {
				return fail(q, "uniqueItems")
			}
		}
		buckets[k] = append(buckets[k], i)
	}
	return nil
}

func combinator(kw string, subs []*node) check {
	switch kw {
	case "allOf":
		return func(q bool, inst any) *ValidationError {
			for _, sub := range subs {
				if e := sub.validate(q, inst); e != nil {
					return e
				}
			}
			return nil
		}
	case "anyOf":
		return func(q bool, inst any) *ValidationError {
			for _, sub := range subs {
				if sub.valid(inst) {
					return nil
				}
			}
			return fail(q, "anyOf")
		}
	}
	return func(q bool, inst any) *ValidationError {
		matched := 0
		for _, sub := range subs {
			if sub.valid(inst) {
				if matched++; matched > 1 {
					return fail(q, "oneOf")
				}
			}
		}
		if matched == 0 {
			return fail(q, "oneOf")
		}
		return nil
	}
}

func (c *compiler) ifThenElse(n *node, s map[string]any, ptr string, raw any) (check, error) {
	cond, err := c.compile("if", ptr, raw)
	if err != nil {
		return nil, err
	}
	n.edges = append(n.edges, edge{cond, ptr})
	var then, els *node
	if t, ok := s["then"]; ok {
		p := child(n.ptr, "then")
		if then, err = c.compile("then", p, t); err != nil {
			return nil, err
		}
		n.edges = append(n.edges, edge{then, p})
	}
	if e, ok := s["else"]; ok {
		p := child(n.ptr, "else")
		if els, err = c.compile("else", p, e); err != nil {
			return nil, err
		}
		n.edges = append(n.edges, edge{els, p})
	}
	if then == nil && els == nil {
		return nil, nil
	}
	return func(q bool, inst any) *ValidationError {
		branch := els
		if cond.valid(inst) {
			branch = then
		}
		if branch == nil {
			return nil
		}
		return branch.validate(q, inst)
	}, nil
}

func (c *compiler) items(s map[string]any, ptr string, raw any) (check, error) {
	sub, err := c.compile("items", ptr, raw)
	if err != nil {
		return nil, err
	}
	prefix := 0
	if p, ok := s["prefixItems"].([]any); ok {
		prefix = len(p)
	}
	if b, ok := raw.(bool); ok {
		if b {
			return nil, nil
		}
		// items: false reports "items" itself, not the false subschema.
		return func(q bool, inst any) *ValidationError {
			if a, ok := inst.([]any); ok && len(a) > prefix {
				return fail(q, "items")
			}
			return nil
		}, nil
	}
	return func(q bool, inst any) *ValidationError {
		if a, ok := inst.([]any); ok {
			for i := prefix; i < len(a); i++ {
				if e := sub.validate(q, a[i]); e != nil {
					return atIndex(q, e, sub, i)
				}
			}
		}
		return nil
	}, nil
}

func (c *compiler) contains(s map[string]any, ptr string, raw any) (check, error) {
	sub, err := c.compile("contains", ptr, raw)
	if err != nil {
		return nil, err
	}
	minC, maxC := 1, -1
	if v, ok := s["minContains"]; ok {
		if minC, ok = nonNegInt(v); !ok {
			return nil, cerr("minContains", child(strings.TrimSuffix(ptr, "/contains"), "minContains"))
		}
	}
	if v, ok := s["maxContains"]; ok {
		if maxC, ok = nonNegInt(v); !ok {
			return nil, cerr("maxContains", child(strings.TrimSuffix(ptr, "/contains"), "maxContains"))
		}
	}
	return func(q bool, inst any) *ValidationError {
		a, ok := inst.([]any)
		if !ok {
			return nil
		}
		matches := 0
		for _, v := range a {
			if sub.valid(v) {
				matches++
				if maxC >= 0 && matches > maxC {
					return fail(q, "maxContains")
				}
			}
		}
		if matches < minC {
			if matches == 0 {
				return fail(q, "contains")
			}
			return fail(q, "minContains")
		}
		return nil
	}, nil
}

// firstFailing validates obj[k] against sub for every key accepted by
// pick and returns the failure of the key that sorts first (Go maps have
// no order, so that is the deterministic choice), with its path segment.
func firstFailing(q bool, obj map[string]any, pick func(string) bool, sub func(string) *node) *ValidationError {
	first, found := "", false
	for k, v := range obj {
		if !pick(k) {
			continue
		}
		if !sub(k).valid(v) {
			if q {
				return errQuick
			}
			if !found || k < first {
				first, found = k, true
			}
		}
	}
	if !found {
		return nil
	}
	s := sub(first)
	return at(false, s.validate(false, obj[first]), s, first)
}

func (c *compiler) patternProperties(ptr string, raw any) (check, error) {
	pats, subs, err := c.schemaMap("patternProperties", ptr, raw)
	if err != nil {
		return nil, err
	}
	res := make([]*regexp.Regexp, len(pats))
	for i, p := range pats {
		if res[i], err = regexp.Compile(p); err != nil {
			return nil, cerr("patternProperties", child(ptr, p))
		}
	}
	return func(q bool, inst any) *ValidationError {
		obj, ok := inst.(map[string]any)
		if !ok {
			return nil
		}
		for i, re := range res {
			sub := subs[i]
			if e := firstFailing(q, obj, re.MatchString, func(string) *node { return sub }); e != nil {
				return e
			}
		}
		return nil
	}, nil
}

func (c *compiler) additionalProperties(s map[string]any, ptr string, raw any) (check, error) {
	sub, err := c.compile("additionalProperties", ptr, raw)
	if err != nil {
		return nil, err
	}
	if b, ok := raw.(bool); ok && b {
		return nil, nil
	}
	known := newNameSet(s["properties"])
	var res []*regexp.Regexp
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for _, p := range sortedKeys(pp) {
			if re, err := regexp.Compile(p); err == nil {
				res = append(res, re)
			}
		}
	}
	extra := func(k string) bool {
		if known.has(k) {
			return false
		}
		for _, re := range res {
			if re.MatchString(k) {
				return false
			}
		}
		return true
	}
	if b, ok := raw.(bool); ok && !b {
		// additionalProperties: false reports itself at the object.
		return func(q bool, inst any) *ValidationError {
			obj, ok := inst.(map[string]any)
			if !ok {
				return nil
			}
			if len(res) == 0 && known.m == nil {
				// Few names and no patterns: counting the known names
				// present is cheaper than iterating the map.
				n := 0
				for _, name := range known.list {
					if _, ok := obj[name]; ok {
						n++
					}
				}
				if n == len(obj) {
					return nil
				}
				return fail(q, "additionalProperties")
			}
			for k := range obj {
				if extra(k) {
					return fail(q, "additionalProperties")
				}
			}
			return nil
		}, nil
	}
	get := func(string) *node { return sub }
	return func(q bool, inst any) *ValidationError {
		if obj, ok := inst.(map[string]any); ok {
			return firstFailing(q, obj, extra, get)
		}
		return nil
	}, nil
}

// nameSet is a set of property names; small sets are scanned linearly,
// which beats hashing for the few properties a tool usually has.
type nameSet struct {
	list []string
	m    map[string]struct{}
}

func newNameSet(props any) nameSet {
	m, _ := props.(map[string]any)
	var ns nameSet
	if len(m) > 8 {
		ns.m = make(map[string]struct{}, len(m))
		for k := range m {
			ns.m[k] = struct{}{}
		}
		return ns
	}
	ns.list = sortedKeys(m)
	return ns
}

func (ns nameSet) has(k string) bool {
	if ns.m != nil {
		_, ok := ns.m[k]
		return ok
	}
	for _, n := range ns.list {
		if n == k {
			return true
		}
	}
	return false
}

// ref compiles a local "$ref" ("#" or a "#/..." JSON pointer, percent- and
// ~-escaped) to the node of its target, shared with every other reference
// to the same location so that recursive schemas stay finite.
func (c *compiler) ref(n *node, ptr string, raw any) (check, error) {
	r, ok := raw.(string)
	if !ok || !strings.HasPrefix(r, "#") {
		return nil, cerr("$ref", ptr)
	}
	frag, err := url.PathUnescape(r[1:])
	if err != nil || (frag != "" && frag[0] != '/') {
		return nil, cerr("$ref", ptr)
	}
	target, canon := c.root, ""
	if frag != "" {
		for _, tok := range strings.Split(frag[1:], "/") {
			switch t := target.(type) {
			case map[string]any:
				tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
				if target, ok = t[tok]; !ok {
					return nil, cerr("$ref", ptr)
				}
				canon = child(canon, tok)
			case []any:
				// Python's int(): "01" and "+1" work, -1 counts from the end.
				i, err := strconv.Atoi(tok)
				if err == nil && i < 0 {
					i += len(t)
				}
				if err != nil || i < 0 || i >= len(t) {
					return nil, cerr("$ref", ptr)
				}
				target = t[i]
				canon = child(canon, strconv.Itoa(i))
			default:
				return nil, cerr("$ref", ptr)
			}
		}
	}
	switch target.(type) {
	case bool, map[string]any:
	default:
		return nil, cerr("$ref", ptr)
	}
	sub, err := c.compile("$ref", canon, target)
	if err != nil {
		return nil, err
	}
	n.edges = append(n.edges, edge{sub, ptr})
	n.refTo = sub
	return sub.validate, nil
}

// checkCycles rejects schemas whose references loop back to a schema
// applied to the same instance (for example {"$ref": "#"} or two $defs
// referring to each other) without descending into the instance: once such
// a loop is entered with an instance it recurses forever (Python raises
// RecursionError there; Go would exhaust its stack).
func (c *compiler) checkCycles(root *node) error {
	const (
		white = iota
		grey
		black
	)
	color := map[*node]int{}
	var visit func(*node) error
	visit = func(n *node) error {
		color[n] = grey
		for _, e := range n.edges {
			switch color[e.to] {
			case grey:
				return cerr("$ref", e.at)
			case white:
				if err := visit(e.to); err != nil {
					return err
				}
			}
		}
		color[n] = black
		return nil
	}
	// Only schemas that can run matter: a loop inside an unreferenced
	// $defs entry is harmless, as it is in Python.
	reach := map[*node]bool{}
	var mark func(*node)
	mark = func(n *node) {
		if !reach[n] {
			reach[n] = true
			for _, k := range n.kids {
				mark(k)
			}
		}
	}
	mark(root)
	ptrs := make([]string, 0, len(c.nodes))
	for p, n := range c.nodes {
		if reach[n] {
			ptrs = append(ptrs, p)
		}
	}
	sort.Strings(ptrs)
	for _, p := range ptrs {
		if n := c.nodes[p]; color[n] == white {
			if err := visit(n); err != nil {
				return err
			}
		}
	}
	return nil
}
