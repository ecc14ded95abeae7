package mcp_test

import (
	"fmt"

	"github.com/treelang/treelang/engine/tools/mcp"
)

func ExampleParseCommand() {
	argv, err := mcp.ParseCommand(`npx -y "@modelcontextprotocol/server-everything" stdio`)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", argv)
	_, err = mcp.ParseCommand(`node 'server.js`)
	fmt.Println(err)
	// Output:
	// ["npx" "-y" "@modelcontextprotocol/server-everything" "stdio"]
	// MCP server command has an unterminated single quote at offset 5
}
