package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// `tools list` shows each tool's parameters in binding order, its
// description and its MCP hints.
func TestCLIToolsList(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"tools", "list", "--tools", "tui/demo/toolbox.json"}, strings.NewReader(""), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "reserve_stock(item, quantity)  Reserve copies") {
		t.Fatalf("output:\n%s", out.String())
	}

	entry := os.Getenv("TREELANG_MCP_EVERYTHING")
	if entry == "" {
		t.Skip("TREELANG_MCP_EVERYTHING is not set (.ci/run installs @modelcontextprotocol/server-everything)")
	}
	out.Reset()
	code = run(context.Background(), []string{"tools", "list", "--mcp-stdio", "node " + entry + " stdio"}, strings.NewReader(""), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "echo(message)  [read-only, idempotent]") {
		t.Fatalf("hints not shown:\n%s", out.String())
	}
}
