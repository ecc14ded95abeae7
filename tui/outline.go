package tui

import "github.com/treelang/treelang/engine"

// ProgramOutline is the debugger's tree of a parsed program.
func ProgramOutline(p *engine.Program) []OutlineNode {
	nodes := engine.Outline(p)
	out := make([]OutlineNode, len(nodes))
	for i, n := range nodes {
		out[i] = OutlineNode{Path: n.Path, Type: n.Type, Label: n.Label, Depth: n.Depth}
	}
	return out
}
