package tracer

import "maps"

// Clone returns a copy of e that can be changed without affecting e, as a
// JSONLWriter transform must: the site's indices, the error, the outcome,
// the counters and the Data map are copied. Values (Arguments, Output,
// Outcome.Value and the values inside Data) are shared; replace them, or
// copy them with CloneValue, rather than changing them in place.
func (e *Event) Clone() *Event {
	c := *e
	if e.Site.Iter != nil {
		c.Site.Iter = append([]int(nil), e.Site.Iter...)
	}
	if e.Error != nil {
		info := *e.Error
		c.Error = &info
	}
	if e.Outcome != nil {
		o := *e.Outcome
		c.Outcome = &o
	}
	if e.Counters != nil {
		n := *e.Counters
		c.Counters = &n
	}
	if e.Data != nil {
		c.Data = maps.Clone(e.Data)
	}
	return &c
}

// CloneValue returns a deep copy of a decoded JSON value: maps and slices
// are copied at every level; other values are returned as they are.
func CloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = CloneValue(x)
		}
		return m
	case []any:
		if v == nil {
			return v
		}
		a := make([]any, len(v))
		for i, x := range v {
			a[i] = CloneValue(x)
		}
		return a
	}
	return v
}
