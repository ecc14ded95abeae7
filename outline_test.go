package main

import (
	"testing"

	"github.com/treelang/treelang/tracer"
)

// A post-mortem trace rebuilds the program tree, leaves (reported by
// their node.exit alone) included, in the order the run met them.
func TestOutlineFromEventsKeepsLeaves(t *testing.T) {
	events := []*tracer.Event{
		{Kind: tracer.NodeEnter, Node: "program", Site: tracer.Site{Path: ""}},
		{Kind: tracer.NodeEnter, Node: "function", Site: tracer.Site{Path: "/body/0"}},
		{Kind: tracer.NodeExit, Node: "value", Site: tracer.Site{Path: "/body/0/params/0"}},
		{Kind: tracer.NodeExit, Node: "function", Site: tracer.Site{Path: "/body/0"}},
	}
	got := outlineFromEvents(events)
	var paths []string
	for _, n := range got {
		paths = append(paths, n.Type+" "+n.Path)
	}
	want := []string{"program ", "function /body/0", "value /body/0/params/0"}
	if len(paths) != len(want) {
		t.Fatalf("outline %q, want %q", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("outline %q, want %q", paths, want)
		}
	}
}
