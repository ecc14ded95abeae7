package replay

import (
	"fmt"
	"strings"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/fixtures"
)

// Drift names how a replay departed from its fixture.
type Drift string

// The kinds of drift.
const (
	DriftUnexpected Drift = "unexpected" // a call after the end, or one the fixture never saw
	DriftReordered  Drift = "reordered"  // the call matches a later entry or another site
	DriftChanged    Drift = "changed"    // the entry's tool name or arguments differ
	DriftUnconsumed Drift = "unconsumed" // entries left when the run ended
	DriftMissing    Drift = "missing"    // a recorded completion never came (stall)
	DriftModel      Drift = "model"      // a model request differs or is out of entries
)

// Actual is the call the engine made.
type Actual struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Site      string         `json:"site,omitempty"`
}

// MismatchError is a ReplayMismatchError with a structured report.
type MismatchError struct {
	Message  string               // the Python library's message
	Drift    Drift                // what kind of drift
	Entry    int                  // 1-based fixture entry, 0 when none applies
	Expected *fixtures.Call       // the fixture entry, if any
	Actual   *Actual              // the engine's call, if any
	Diff     []fixtures.FieldDiff // field-by-field differences
	Detail   string               // extra explanation
}

func (e *MismatchError) Error() string { return e.Message }

// ErrorType returns ReplayMismatchError.
func (e *MismatchError) ErrorType() engine.ErrorType { return engine.ReplayMismatchError }

// Is matches ReplayMismatchError and its bases.
func (e *MismatchError) Is(target error) bool {
	t, ok := target.(engine.ErrorType)
	return ok && engine.ReplayMismatchError.IsA(t)
}

// Report is the structured form for --output json and the debugger.
func (e *MismatchError) Report() map[string]any {
	m := map[string]any{"drift": string(e.Drift), "message": e.Message}
	if e.Entry > 0 {
		m["entry"] = e.Entry
	}
	if e.Expected != nil {
		m["expected"] = callJSON(e.Expected)
	}
	if e.Actual != nil {
		m["actual"] = map[string]any{"name": e.Actual.Name, "arguments": e.Actual.Arguments, "site": e.Actual.Site}
	}
	if len(e.Diff) > 0 {
		d := make([]any, len(e.Diff))
		for i, f := range e.Diff {
			d[i] = map[string]any{"path": f.Path, "expected": f.Expected, "actual": f.Actual, "kind": f.Kind}
		}
		m["diff"] = d
	}
	if e.Detail != "" {
		m["detail"] = e.Detail
	}
	return m
}

func callJSON(c *fixtures.Call) map[string]any {
	m := map[string]any{"name": c.Name, "arguments": c.Arguments}
	if c.Error != nil {
		m["error"] = map[string]any{"type": c.Error.Type, "message": c.Error.Message}
	} else {
		m["output"] = c.Output
	}
	if c.Site != "" {
		m["site"] = c.Site
		m["attempt"] = c.Attempt
	}
	return m
}

// SideBySide renders the expected entry and the actual call in two
// columns with the differing fields marked, for terminals and logs.
func (e *MismatchError) SideBySide() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay drift: %s", e.Drift)
	if e.Entry > 0 {
		fmt.Fprintf(&b, " at fixture entry %d", e.Entry)
	}
	b.WriteString("\n")
	if e.Detail != "" {
		b.WriteString(e.Detail + "\n")
	}
	if e.Expected == nil && e.Actual == nil {
		for _, d := range e.Diff {
			fmt.Fprintf(&b, "  %s %s: expected %s, got %s\n", d.Kind, d.Path, compact(d.Expected), compact(d.Actual))
		}
		return b.String()
	}
	left := []string{"EXPECTED (fixture)"}
	right := []string{"ACTUAL (this run)"}
	if e.Expected != nil {
		left = append(left, "tool: "+e.Expected.Name)
		if e.Expected.Site != "" {
			left = append(left, fmt.Sprintf("site: %s#%d", e.Expected.Site, e.Expected.Attempt))
		}
		left = append(left, "arguments: "+compact(e.Expected.Arguments))
	} else {
		left = append(left, "(no entry)")
	}
	if e.Actual != nil {
		right = append(right, "tool: "+e.Actual.Name)
		if e.Actual.Site != "" {
			right = append(right, "site: "+e.Actual.Site)
		}
		right = append(right, "arguments: "+compact(e.Actual.Arguments))
	} else {
		right = append(right, "(no call)")
	}
	width := 0
	for _, l := range left {
		width = max(width, len([]rune(l)))
	}
	width = min(width, 60)
	for i := 0; i < max(len(left), len(right)); i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		mark := "  "
		if i > 0 && l != r && strings.SplitN(l, ":", 2)[0] == strings.SplitN(r, ":", 2)[0] &&
			strings.TrimSpace(l) != strings.TrimSpace(r) {
			mark = "≠ "
		}
		fmt.Fprintf(&b, "%s%-*s │ %s\n", mark, width, truncate(l, width), r)
	}
	for _, d := range e.Diff {
		fmt.Fprintf(&b, "  %s %s: expected %s, got %s\n", d.Kind, d.Path, compact(d.Expected), compact(d.Actual))
	}
	return b.String()
}

func compact(v any) string {
	data, err := engine.EncodeValue(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
