package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/treelang/treelang/tracer"
)

// attemptRow is one physical attempt of a call.
type attemptRow struct {
	attempt   int
	start     *tracer.Event
	end       *tracer.Event
	backoffMS float64 // the backoff slept after this attempt, if any
	backedOff bool    // a backoff started after this attempt
	slept     bool    // and it ended
}

// ladder is the retry history of one call instance, as of the cursor.
type ladder struct {
	tool      string
	site      string
	requested int
	attempts  []attemptRow
	cancel    *tracer.Event
	exit      *tracer.Event // the call node's exit, once it happened
	stop      string        // why retrying stopped, or what is going on
}

// buildLadder collects the attempts of e's call instance up to event
// index upto. It returns nil when e belongs to no call.
func buildLadder(h *history, e *tracer.Event, upto int) *ladder {
	idx := h.callEvents(e)
	if len(idx) == 0 {
		return nil
	}
	l := &ladder{site: instanceKey(e.Site)}
	for _, i := range idx {
		if int(i) > upto {
			break
		}
		ev := h.events[i]
		if ev.Tool != "" {
			l.tool = ev.Tool
		}
		if ev.Requested > 0 {
			l.requested = ev.Requested
		}
		switch ev.Kind {
		case tracer.ToolAttemptStart:
			l.attempts = append(l.attempts, attemptRow{attempt: ev.Site.Attempt, start: ev})
		case tracer.ToolAttemptEnd:
			if r := l.row(ev.Site.Attempt); r != nil {
				r.end = ev
			} else {
				l.attempts = append(l.attempts, attemptRow{attempt: ev.Site.Attempt, end: ev})
			}
		case tracer.RetryBackoffStart:
			if n := len(l.attempts); n > 0 {
				l.attempts[n-1].backedOff = true
				l.attempts[n-1].backoffMS = ev.DelayMS
			}
		case tracer.RetryBackoffEnd:
			if n := len(l.attempts); n > 0 {
				l.attempts[n-1].slept = true
				if ev.DelayMS > 0 {
					l.attempts[n-1].backoffMS = ev.DelayMS
				}
			}
		case tracer.Cancel:
			l.cancel = ev
		case tracer.NodeExit:
			l.exit = ev
		}
	}
	if len(l.attempts) == 0 && l.cancel == nil {
		return nil
	}
	l.stop = l.stopReason()
	return l
}

func (l *ladder) row(attempt int) *attemptRow {
	for i := len(l.attempts) - 1; i >= 0; i-- {
		if l.attempts[i].attempt == attempt {
			return &l.attempts[i]
		}
	}
	return nil
}

// stopReason says why retrying stopped: succeeded, not idempotent
// (Requested == 1), attempts exhausted, non-retryable error or cancelled;
// or that the call is still going.
func (l *ladder) stopReason() string {
	n := len(l.attempts)
	if l.cancel != nil {
		s := "cancelled"
		if l.cancel.Reason != "" {
			s += " (" + l.cancel.Reason + ")"
		}
		if l.cancel.Cause != "" {
			s += " by " + l.cancel.Cause
		}
		return s
	}
	if n == 0 {
		return ""
	}
	last := l.attempts[n-1]
	if last.end == nil {
		return fmt.Sprintf("in progress: attempt %d running", last.attempt)
	}
	if last.backedOff && !last.slept {
		return fmt.Sprintf("backing off %s before attempt %d", formatMS(last.backoffMS), last.attempt+1)
	}
	if last.backedOff {
		return fmt.Sprintf("backoff over, attempt %d next", last.attempt+1)
	}
	end := last.end
	if end.Error != nil && l.exit == nil && end.Reason == "" && !isCancellation(end.Error.Type, end.Reason) &&
		(l.requested == 0 || last.attempt < l.requested) {
		return fmt.Sprintf("attempt %d failed; retry decision pending", last.attempt)
	}
	if end.Error == nil {
		if n == 1 {
			return "succeeded on the first attempt"
		}
		return fmt.Sprintf("succeeded on attempt %d", last.attempt)
	}
	if end.Reason != "" && !isCancellation(end.Error.Type, end.Reason) {
		return end.Reason // the engine's own account is authoritative
	}
	switch {
	case isCancellation(end.Error.Type, end.Reason):
		return "cancelled"
	case l.requested == 1:
		return "not retried: Requested == 1 (not idempotent, or max_attempts 1)"
	case l.requested > 0 && last.attempt >= l.requested:
		return fmt.Sprintf("attempts exhausted (%d of %d)", last.attempt, l.requested)
	}
	return "non-retryable error (" + end.Error.Type + ")"
}

func isCancellation(errType, reason string) bool {
	switch reason {
	case tracer.ReasonSibling, tracer.ReasonUser, tracer.ReasonDeadline:
		return true
	}
	return errType == "CancelledError" || errType == "context.Canceled"
}

// render writes the ladder as text lines.
func (l *ladder) render(st *Styles, selected int) []string {
	head := "Retry ladder"
	if l.tool != "" {
		head += "  " + l.tool
	}
	head += "  " + l.site
	if l.requested > 0 {
		head += "  (policy allows " + strconv.Itoa(l.requested) + ")"
	}
	out := []string{st.Bold.Render(head)}
	for _, a := range l.attempts {
		line := fmt.Sprintf("  attempt %d  ", a.attempt)
		switch {
		case a.end == nil:
			line += st.Status[statusRunning].Render("▶ running")
		case a.end.Error != nil:
			line += st.Error.Render("✗ " + a.end.Error.Type + ": " + firstLine(a.end.Error.Message))
		default:
			line += st.Good.Render("✓ ok")
			if a.end.HasOutput {
				line += st.Muted.Render(" → " + compactJSON(a.end.Output, 40))
			}
		}
		if a.end != nil && a.end.Duration > 0 {
			line += st.Muted.Render("  " + a.end.Duration.Round(time.Microsecond).String())
		}
		if a.attempt == selected {
			line += st.Accent.Render(" ◀")
		}
		out = append(out, line)
		if a.backedOff {
			s := "             backoff " + formatMS(a.backoffMS)
			if !a.slept {
				s += " (sleeping)"
			}
			out = append(out, st.Warn.Render(s))
		}
	}
	if l.cancel != nil && len(l.attempts) == 0 {
		out = append(out, "  "+st.Status[statusCancelled].Render("⊘ cancelled before any attempt"))
	}
	if l.stop != "" {
		label := "  stopped: "
		for _, p := range []string{"in progress", "backing off", "backoff over", "attempt "} {
			if strings.HasPrefix(l.stop, p) {
				label = "  now: "
			}
		}
		out = append(out, label+st.Bold.Render(l.stop))
	}
	return out
}

// causality explains a fail-fast failure: the branch that failed first and
// the siblings its failure cancelled, with the calls they had in flight.
type causality struct {
	first     *tracer.Event // the first failure of the run, as of the cursor
	failure   *tracer.Event // the failure the cancellations point at
	cancelled []cancelled
}

type cancelled struct {
	cancel   *tracer.Event
	inFlight []*tracer.Event // attempt starts with no end before the cancel
}

// buildCausality explains e (a failure or a cancel) using events up to
// index upto. It returns nil when there is nothing to explain.
func buildCausality(h *history, e *tracer.Event, upto int) *causality {
	var failure *tracer.Event
	switch {
	case e.Kind == tracer.Cancel && e.Cause != "":
		failure = findFailureAt(h, e.Cause, upto)
	case isFailure(e):
		failure = e
	default:
		return nil
	}
	c := &causality{failure: failure}
	for _, fi := range h.failures {
		if int(fi) > upto {
			break
		}
		f := h.events[fi]
		failedNode := f.Kind == tracer.NodeExit && f.Error != nil && !isCancellation(f.Error.Type, f.Reason)
		if failedNode || (f.Kind == tracer.BranchOutcome && f.Outcome != nil && !f.Outcome.Success) {
			c.first = f
			break
		}
	}
	// A run-level failure (run.end, the root's exit) is the first
	// failure surfacing: explain that one.
	if failure != nil && failure.Site.Path == "" && c.first != nil {
		failure = c.first
		c.failure = c.first
	}
	if failure != nil {
		inst := instanceKey(failure.Site)
		var idx []int
		for cause, list := range h.causes {
			if cause != inst && !strings.HasPrefix(cause, inst+"#") && !strings.HasPrefix(cause, inst+"[") && !strings.HasPrefix(cause, inst+"/") {
				continue
			}
			for _, ci := range list {
				if int(ci) <= upto {
					idx = append(idx, int(ci))
				}
			}
		}
		slices.Sort(idx)
		for _, ci := range idx {
			c.cancelled = append(c.cancelled, cancelled{cancel: h.events[ci], inFlight: inFlight(h, ci)})
		}
	} else if e.Kind == tracer.Cancel {
		c.cancelled = append(c.cancelled, cancelled{cancel: e, inFlight: inFlight(h, upto)})
	}
	if c.first == nil && len(c.cancelled) == 0 {
		return nil
	}
	return c
}

// findFailureAt returns the latest failure event at site (as a Site string
// or instance key) up to index upto.
func findFailureAt(h *history, site string, upto int) *tracer.Event {
	for j := len(h.failures) - 1; j >= 0; j-- {
		fi := int(h.failures[j])
		if fi > upto {
			continue
		}
		f := h.events[fi]
		if f.Site.String() == site || instanceKey(f.Site) == site {
			return f
		}
	}
	return nil
}

// inFlightWindow bounds how far back inFlight looks for unfinished calls.
const inFlightWindow = 20000

// inFlight returns the tool attempts under the cancelled site that had
// started and not ended before event ci, or that ended only because of
// the cancellation.
func inFlight(h *history, ci int) []*tracer.Event {
	ce := h.events[ci]
	prefix := ce.Site.Path
	open := map[string]*tracer.Event{}
	var order []string
	for i := max(0, ci-inFlightWindow); i < ci; i++ {
		ev := h.events[i]
		if ev.Kind != tracer.ToolAttemptStart && ev.Kind != tracer.ToolAttemptEnd {
			continue
		}
		if !strings.HasPrefix(ev.Site.Path, prefix) || (len(ce.Site.Iter) > 0 && !iterPrefix(ce.Site.Iter, ev.Site.Iter)) {
			continue
		}
		k := ev.Site.String()
		switch {
		case ev.Kind == tracer.ToolAttemptStart:
			open[k] = ev
			order = append(order, k)
		case ev.Error != nil && isCancellation(ev.Error.Type, ev.Reason):
			// Ended by this very cancellation (reported just before it):
			// it was in flight.
		default:
			delete(open, k)
		}
	}
	var out []*tracer.Event
	for _, k := range order {
		if ev, ok := open[k]; ok {
			out = append(out, ev)
			delete(open, k)
		}
	}
	return out
}

func iterPrefix(p, s []int) bool {
	if len(p) > len(s) {
		return false
	}
	for i := range p {
		if p[i] != s[i] {
			return false
		}
	}
	return true
}

// render writes the causality as text lines.
func (c *causality) render(st *Styles) []string {
	out := []string{st.Bold.Render("Cancellation causality")}
	if c.first != nil {
		out = append(out, "  first failure: "+st.Error.Render(failureText(c.first)))
	}
	if c.failure != nil && c.failure != c.first && (c.first == nil || c.first.Branch != c.failure.Branch || c.failure.Branch < 0) {
		out = append(out, "  this failure:  "+st.Error.Render(failureText(c.failure)))
	}
	if len(c.cancelled) == 0 {
		if c.failure != nil {
			out = append(out, st.Muted.Render("  no sibling was cancelled by this failure (yet)"))
		}
		return out
	}
	out = append(out, fmt.Sprintf("  cancelled %d sibling(s):", len(c.cancelled)))
	for _, cc := range c.cancelled {
		ce := cc.cancel
		line := "    " + st.Status[statusCancelled].Render("⊘") + " " + branchText(ce.Branch) + ce.Site.String()
		if ce.Tool != "" {
			line += " " + ce.Tool
		}
		if ce.Reason != "" {
			line += st.Muted.Render("  (" + ce.Reason + ")")
		}
		out = append(out, line)
		if len(cc.inFlight) == 0 {
			out = append(out, st.Muted.Render("        no call in flight"))
		}
		for _, f := range cc.inFlight {
			s := fmt.Sprintf("        in flight: %s attempt %d at %s", f.Tool, f.Site.Attempt, f.Site.String())
			if f.Arguments != nil {
				s += " " + compactJSON(f.Arguments, 40)
			}
			out = append(out, st.Warn.Render(s))
		}
	}
	return out
}

func branchText(b int) string {
	if b < 0 {
		return ""
	}
	return "branch " + strconv.Itoa(b) + " "
}

func failureText(e *tracer.Event) string {
	s := branchText(e.Branch) + "at " + e.Site.String()
	if e.Tool != "" {
		s += " " + e.Tool
	}
	if e.Error != nil {
		s += ": " + e.Error.Type + ": " + firstLine(e.Error.Message)
	} else if e.Outcome != nil {
		s += ": " + e.Outcome.ErrorType + ": " + e.Outcome.ErrorMessage
	}
	return s
}
