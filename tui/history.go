package tui

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/treelang/treelang/tracer"
)

// nodeStatus is a program node's state as of the cursor.
type nodeStatus uint8

const (
	statusPending nodeStatus = iota
	statusRunning
	statusOK
	statusFailed
	statusRetrying
	statusCancelled
	statusCount
)

var statusNames = [statusCount]string{"pending", "running", "ok", "failed", "retrying", "cancelled"}
var statusGlyphs = [statusCount]string{"·", "▶", "✓", "✗", "↻", "⊘"}

// String names the status as the tree shows it.
func (s nodeStatus) String() string { return statusNames[s] }

// nodeState is one node's status and the highest attempt number seen.
type nodeState struct {
	status   nodeStatus
	attempts int32
}

// delta is what one event did to the tree: node's state before and after.
// Applying next moves the view forward past the event; restoring prev undoes
// it. node is -1 for events that change no node.
type delta struct {
	node       int32
	prev, next nodeState
}

// history holds every event of one run in order, and the program tree as of
// a cursor. Moving the cursor applies or undoes one delta per event crossed,
// so stepping costs O(1) however long the run is.
type history struct {
	events []*tracer.Event
	deltas []delta

	nodes   []OutlineNode
	pathIdx map[string]int32
	head    []nodeState // after every event
	view    []nodeState // after events[:applied]
	applied int         // how many events the view includes (cursor+1)

	// lastCounters[i] is the index of the latest event at or before i that
	// carries Counters, or -1.
	lastCounters []int32
	// calls groups the tool, backoff, cancel and node.exit events of one
	// call instance (site without attempt).
	calls map[uint64][]int32 // by instanceHash; check sameInstance on use
	// causes groups cancel events by the site that caused them.
	causes map[string][]int32
	// failures holds the indices of failure events in order.
	failures []int32
}

func newHistory(outline []OutlineNode, capacity int) *history {
	h := &history{
		events:       make([]*tracer.Event, 0, capacity),
		deltas:       make([]delta, 0, capacity),
		lastCounters: make([]int32, 0, capacity),
		nodes:        append([]OutlineNode(nil), outline...),
		pathIdx:      make(map[string]int32, len(outline)),
		calls:        map[uint64][]int32{},
		causes:       map[string][]int32{},
	}
	for i, n := range h.nodes {
		h.pathIdx[n.Path] = int32(i)
	}
	h.head = make([]nodeState, len(h.nodes))
	h.view = make([]nodeState, len(h.nodes))
	return h
}

// len returns how many events the history holds.
func (h *history) len() int { return len(h.events) }

// cursor returns the index of the selected event, or -1 when empty.
func (h *history) cursor() int { return h.applied - 1 }

// instanceKey is the key of a call instance: its site without the attempt.
func instanceKey(s tracer.Site) string {
	if len(s.Iter) == 0 {
		return s.Path
	}
	var b strings.Builder
	b.WriteString(s.Path)
	b.WriteByte('[')
	for i, n := range s.Iter {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(n))
	}
	b.WriteByte(']')
	return b.String()
}

// instanceHash hashes a site without its attempt (FNV-1a), so indexing a
// million events allocates no key strings.
func instanceHash(s tracer.Site) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(s.Path); i++ {
		h = (h ^ uint64(s.Path[i])) * prime
	}
	for _, n := range s.Iter {
		h = (h ^ 0xff) * prime
		for v := uint64(n); ; v >>= 8 {
			h = (h ^ (v & 0xff)) * prime
			if v < 256 {
				break
			}
		}
	}
	return h
}

// sameInstance reports whether a and b are sites of the same call instance.
func sameInstance(a, b tracer.Site) bool {
	return a.Path == b.Path && slices.Equal(a.Iter, b.Iter)
}

// callEvents returns the indices of the events of e's call instance.
func (h *history) callEvents(e *tracer.Event) []int32 {
	idx := h.calls[instanceHash(e.Site)]
	for _, i := range idx {
		if !sameInstance(h.events[i].Site, e.Site) {
			// A hash collision: filter (rare, so allocating is fine).
			var out []int32
			for _, j := range idx {
				if sameInstance(h.events[j].Site, e.Site) {
					out = append(out, j)
				}
			}
			return out
		}
	}
	return idx
}

// nodeFor returns the tree index of path, adding a node when the run
// reports one the outline does not know (always so for a bare trace).
func (h *history) nodeFor(e *tracer.Event) int32 {
	path := e.Site.Path
	if e.Kind == tracer.RunStart || e.Kind == tracer.RunEnd {
		// The run's own events belong to the program's root, if listed.
		if i, ok := h.pathIdx[path]; ok {
			return i
		}
		if i, ok := h.pathIdx["/"]; ok && path == "" {
			return i
		}
		return -1
	}
	if path == "" {
		// The program root: listed as "" or "/".
		if i, ok := h.pathIdx[""]; ok {
			return i
		}
		if i, ok := h.pathIdx["/"]; ok {
			return i
		}
		return -1
	}
	if i, ok := h.pathIdx[path]; ok {
		return i
	}
	label := e.Node
	if e.Tool != "" {
		label = e.Tool
	}
	depth := e.Depth
	if depth == 0 {
		depth = strings.Count(path, "/") - 1
	}
	n := OutlineNode{Path: path, Type: e.Node, Label: label, Depth: depth}
	// Nodes the outline lacks are listed in order of first appearance.
	i := int32(len(h.nodes))
	h.nodes = append(h.nodes, n)
	h.head = append(h.head, nodeState{})
	h.view = append(h.view, nodeState{})
	h.pathIdx[path] = i
	return i
}

// failure reports whether e is a failure a user would want to stop at.
func isFailure(e *tracer.Event) bool {
	return e.Error != nil || (e.Kind == tracer.BranchOutcome && e.Outcome != nil && !e.Outcome.Success)
}

// transition returns the node state after e.
func transition(cur nodeState, e *tracer.Event) (nodeState, bool) {
	next := cur
	switch e.Kind {
	case tracer.NodeEnter:
		next.status = statusRunning
	case tracer.NodeExit:
		switch {
		case cur.status == statusCancelled:
		case e.Error != nil:
			next.status = statusFailed
		default:
			next.status = statusOK
		}
	case tracer.ToolAttemptStart:
		next.status = statusRunning
		if a := int32(e.Site.Attempt); a > next.attempts {
			next.attempts = a
		}
	case tracer.ToolAttemptEnd:
		if cur.status == statusCancelled {
			break
		}
		if e.Error != nil {
			next.status = statusFailed
		} else {
			next.status = statusOK
		}
	case tracer.RetryBackoffStart, tracer.RetryBackoffEnd:
		next.status = statusRetrying
	case tracer.Cancel:
		next.status = statusCancelled
	case tracer.RunStart:
		next.status = statusRunning
	case tracer.RunEnd:
		if e.Error != nil {
			next.status = statusFailed
		} else {
			next.status = statusOK
		}
	default:
		return cur, false
	}
	return next, true
}

// append adds e at the end. The view follows when it was at the end,
// unless hold is set.
func (h *history) append(e *tracer.Event, hold bool) {
	idx := int32(len(h.events))
	follow := h.applied == len(h.events) && !hold
	h.events = append(h.events, e)
	d := delta{node: -1}
	if _, changes := transition(nodeState{}, e); !changes {
		// model, replay and limit events change no node
	} else if n := h.nodeFor(e); n >= 0 {
		if next, ok := transition(h.head[n], e); ok {
			d = delta{node: n, prev: h.head[n], next: next}
			h.head[n] = next
		}
	}
	h.deltas = append(h.deltas, d)
	last := int32(-1)
	if e.Counters != nil {
		last = idx
	} else if idx > 0 {
		last = h.lastCounters[idx-1]
	}
	h.lastCounters = append(h.lastCounters, last)
	switch e.Kind {
	case tracer.ToolAttemptStart, tracer.ToolAttemptEnd, tracer.RetryBackoffStart, tracer.RetryBackoffEnd, tracer.Cancel, tracer.NodeExit:
		k := instanceHash(e.Site)
		h.calls[k] = append(h.calls[k], idx)
	}
	if e.Kind == tracer.Cancel && e.Cause != "" {
		h.causes[e.Cause] = append(h.causes[e.Cause], idx)
	}
	if isFailure(e) {
		h.failures = append(h.failures, idx)
	}
	if follow {
		h.seek(int(idx))
	}
}

// seek moves the cursor to event i (clamped), applying or undoing the
// deltas in between.
func (h *history) seek(i int) {
	if len(h.events) == 0 {
		return
	}
	i = max(0, min(i, len(h.events)-1))
	target := i + 1
	if target == len(h.events) && target-h.applied > len(h.events)/2 {
		// Jumping to the end from far away: copy the head.
		copy(h.view, h.head)
		h.applied = target
		return
	}
	for h.applied < target {
		if d := h.deltas[h.applied]; d.node >= 0 {
			h.view[d.node] = d.next
		}
		h.applied++
	}
	for h.applied > target {
		h.applied--
		if d := h.deltas[h.applied]; d.node >= 0 {
			h.view[d.node] = d.prev
		}
	}
}

// at returns event i, or nil.
func (h *history) at(i int) *tracer.Event {
	if i < 0 || i >= len(h.events) {
		return nil
	}
	return h.events[i]
}

// selected returns the event at the cursor, or nil.
func (h *history) selected() *tracer.Event { return h.at(h.cursor()) }

// counters returns the budget counters as of the cursor, or nil.
func (h *history) counters() *tracer.Counters {
	c := h.cursor()
	if c < 0 {
		return nil
	}
	if j := h.lastCounters[c]; j >= 0 {
		return h.events[j].Counters
	}
	return nil
}

// next returns the index of the first event after from that match
// accepts, or -1.
func (h *history) next(from int, match func(*tracer.Event) bool) int {
	for i := from + 1; i < len(h.events); i++ {
		if match(h.events[i]) {
			return i
		}
	}
	return -1
}

// prev returns the index of the last event before from that match accepts,
// or -1.
func (h *history) prev(from int, match func(*tracer.Event) bool) int {
	for i := min(from, len(h.events)) - 1; i >= 0; i-- {
		if match(h.events[i]) {
			return i
		}
	}
	return -1
}

// nextFailure returns the index of the first failure after from, or -1,
// by binary search in the failure index.
func (h *history) nextFailure(from int) int {
	j := sort.Search(len(h.failures), func(k int) bool { return int(h.failures[k]) > from })
	if j < len(h.failures) {
		return int(h.failures[j])
	}
	return -1
}
