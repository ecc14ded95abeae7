package jsonschema

import (
	"regexp"
	"sort"
	"strconv"
)

// annot is what a schema object contributes to the evaluated properties and
// items of an instance, for unevaluatedProperties and unevaluatedItems. It
// follows Python's find_evaluated_property_keys_by_schema and
// find_evaluated_item_indexes_by_schema, quirks included: a key of an
// additionalProperties or unevaluatedProperties object schema counts as an
// evaluated property name, and any "items" evaluates every item.
type annot struct {
	ref      *node
	allProps bool    // additionalProperties or unevaluatedProperties is true
	props    nameSet // names under properties, and the quirk keys
	patterns []*regexp.Regexp
	depNames []string
	depSubs  []*node
	combos   []*node // allOf, oneOf and anyOf subschemas
	ifN      *node
	thenN    *node
	elseN    *node

	allItems  bool // "items" is present
	prefix    int
	itemTests []*node // contains and unevaluatedItems: an item valid here is evaluated
}

// annotate records n's annotations. It runs once the whole schema is
// compiled (and only when an unevaluated* keyword occurs), so every
// subschema is in c.nodes.
func (c *compiler) annotate(n *node, s map[string]any) {
	a := &annot{ref: n.refTo}
	sub := func(kw string) *node { return c.nodes[child(n.ptr, kw)] }
	var names []string
	if m, ok := s["properties"].(map[string]any); ok {
		names = append(names, sortedKeys(m)...)
	}
	for _, kw := range []string{"additionalProperties", "unevaluatedProperties"} {
		switch v := s[kw].(type) {
		case bool:
			a.allProps = a.allProps || v
		case map[string]any:
			names = append(names, sortedKeys(v)...)
		}
	}
	sort.Strings(names)
	a.props = newNameSet(toSet(names))
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for _, p := range sortedKeys(pp) {
			if re, err := regexp.Compile(p); err == nil {
				a.patterns = append(a.patterns, re)
			}
		}
	}
	if ds, ok := s["dependentSchemas"].(map[string]any); ok {
		a.depNames = sortedKeys(ds)
		for _, p := range a.depNames {
			a.depSubs = append(a.depSubs, c.nodes[child(child(n.ptr, "dependentSchemas"), p)])
		}
	}
	for _, kw := range []string{"allOf", "oneOf", "anyOf"} {
		if arr, ok := s[kw].([]any); ok {
			for i := range arr {
				a.combos = append(a.combos, c.nodes[child(child(n.ptr, kw), strconv.Itoa(i))])
			}
		}
	}
	if _, ok := s["if"]; ok {
		a.ifN, a.thenN, a.elseN = sub("if"), sub("then"), sub("else")
	}
	_, a.allItems = s["items"]
	if p, ok := s["prefixItems"].([]any); ok {
		a.prefix = len(p)
	}
	for _, kw := range []string{"contains", "unevaluatedItems"} {
		if t := sub(kw); t != nil {
			a.itemTests = append(a.itemTests, t)
		}
	}
	n.ann = a
}

func toSet(names []string) map[string]any {
	m := make(map[string]any, len(names))
	for _, k := range names {
		m[k] = true
	}
	return m
}

// evaluatedProp reports whether n evaluates property k of obj.
func (n *node) evaluatedProp(obj map[string]any, k string) bool {
	a := n.ann
	if a == nil {
		return false
	}
	if a.allProps || a.props.has(k) {
		return true
	}
	if a.ref != nil && a.ref.evaluatedProp(obj, k) {
		return true
	}
	for _, re := range a.patterns {
		if re.MatchString(k) {
			return true
		}
	}
	for i, p := range a.depNames {
		if _, ok := obj[p]; ok && a.depSubs[i].evaluatedProp(obj, k) {
			return true
		}
	}
	for _, sub := range a.combos {
		if sub.valid(obj) && sub.evaluatedProp(obj, k) {
			return true
		}
	}
	if a.ifN != nil {
		if a.ifN.valid(obj) {
			return a.ifN.evaluatedProp(obj, k) || (a.thenN != nil && a.thenN.evaluatedProp(obj, k))
		}
		return a.elseN != nil && a.elseN.evaluatedProp(obj, k)
	}
	return false
}

// evaluatedItem reports whether n evaluates item i of arr.
func (n *node) evaluatedItem(arr []any, i int) bool {
	a := n.ann
	if a == nil {
		return false
	}
	if a.allItems || i < a.prefix {
		return true
	}
	if a.ref != nil && a.ref.evaluatedItem(arr, i) {
		return true
	}
	if a.ifN != nil {
		if a.ifN.valid(arr) {
			if a.ifN.evaluatedItem(arr, i) || (a.thenN != nil && a.thenN.evaluatedItem(arr, i)) {
				return true
			}
		} else if a.elseN != nil && a.elseN.evaluatedItem(arr, i) {
			return true
		}
	}
	for _, t := range a.itemTests {
		if t.valid(arr[i]) {
			return true
		}
	}
	for _, sub := range a.combos {
		if sub.valid(arr) && sub.evaluatedItem(arr, i) {
			return true
		}
	}
	return false
}

// unevaluatedProperties checks the properties no other keyword evaluated
// against sub; any failure reports "unevaluatedProperties" at the object.
func unevaluatedProperties(n, sub *node) check {
	return func(q bool, inst any) *ValidationError {
		obj, ok := inst.(map[string]any)
		if !ok {
			return nil
		}
		for k, v := range obj {
			if !n.evaluatedProp(obj, k) && !sub.valid(v) {
				return fail(q, "unevaluatedProperties")
			}
		}
		return nil
	}
}

// unevaluatedItems reports "unevaluatedItems" at the array when an item is
// evaluated by no keyword (an item valid under unevaluatedItems counts as
// evaluated).
func unevaluatedItems(n *node) check {
	return func(q bool, inst any) *ValidationError {
		arr, ok := inst.([]any)
		if !ok {
			return nil
		}
		for i := range arr {
			if !n.evaluatedItem(arr, i) {
				return fail(q, "unevaluatedItems")
			}
		}
		return nil
	}
}
