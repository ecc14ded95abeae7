package mcp

import (
	"github.com/treelang/treelang/engine"
	"strings"
)

// ParseCommand splits a command line such as `npx -y "@scope/server" --dir
// 'My Files'` into the program and its arguments, the way a POSIX shell
// splits words, without running a shell: no variables, globs, pipes or
// redirections are interpreted. Single quotes keep everything literally;
// double quotes keep everything but \" \\ \$ and \` escapes; outside quotes
// a backslash escapes the next character. An unbalanced quote, a trailing
// backslash or an empty command is an error.
func ParseCommand(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		i       int
		runes   = []rune(s)
		quoteAt int
	)
	for i < len(runes) {
		r := runes[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case r == '\\':
			if i+1 >= len(runes) {
				return nil, engine.Errorf(engine.ValueError, "MCP server command ends with a lone backslash")
			}
			if runes[i+1] != '\n' {
				cur.WriteRune(runes[i+1])
				inWord = true
			}
			i += 2
		case r == '\'':
			inWord = true
			quoteAt = i
			i++
			for i < len(runes) && runes[i] != '\'' {
				cur.WriteRune(runes[i])
				i++
			}
			if i >= len(runes) {
				return nil, engine.Errorf(engine.ValueError, "MCP server command has an unterminated single quote at offset %d", len(string(runes[:quoteAt])))
			}
			i++
		case r == '"':
			inWord = true
			quoteAt = i
			i++
			closed := false
			for i < len(runes) {
				c := runes[i]
				if c == '"' {
					closed = true
					i++
					break
				}
				if c == '\\' && i+1 < len(runes) && strings.ContainsRune("\"\\$`\n", runes[i+1]) {
					if runes[i+1] != '\n' {
						cur.WriteRune(runes[i+1])
					}
					i += 2
					continue
				}
				cur.WriteRune(c)
				i++
			}
			if !closed {
				return nil, engine.Errorf(engine.ValueError, "MCP server command has an unterminated double quote at offset %d", len(string(runes[:quoteAt])))
			}
		default:
			cur.WriteRune(r)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, engine.Errorf(engine.ValueError, "empty MCP server command")
	}
	return words, nil
}
