package mcp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/treelang/treelang/engine"
)

// wireResult is a tools/call result as it came over the wire.
type wireResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
}

// decodeResult maps a raw CallToolResult to a Treelang value the way the
// Python MCPToolProvider does (reference §8.3):
//
//   - isError: ToolExecutionError "Error calling tool {name}: {texts joined
//     by "; "}" ("provider returned an unspecified error" without text);
//   - structuredContent, when present and not null, as-is;
//   - no content: null;
//   - content that is not all text: the list of the content items as JSON
//     objects (Python's model_dump);
//   - otherwise each text is decoded as JSON, then as a Python literal, and
//     kept as the raw string when neither parses; one item gives a scalar,
//     several a list.
//
// Numbers stay json.Number throughout.
func decodeResult(tool string, raw []byte) (any, error) {
	var res wireResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, engine.Errorf(engine.ProviderResponseError, "MCP tool '%s' returned a malformed result: %v", tool, err)
	}
	texts := make([]string, 0, len(res.Content))
	allText := true
	for _, item := range res.Content {
		var c struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(item, &c) != nil || c.Type != "text" || c.Text == nil {
			allText = false
			continue
		}
		texts = append(texts, *c.Text)
	}
	if res.IsError {
		detail := strings.Join(texts, "; ")
		if detail == "" {
			detail = "provider returned an unspecified error"
		}
		return nil, engine.Errorf(engine.ToolExecutionError, "Error calling tool %s: %s", tool, detail)
	}
	if sc := bytes.TrimSpace(res.StructuredContent); len(sc) > 0 && !bytes.Equal(sc, []byte("null")) {
		v, err := engine.DecodeValue(sc)
		if err != nil {
			return nil, engine.Errorf(engine.ProviderResponseError, "MCP tool '%s' returned malformed structured content: %v", tool, err)
		}
		return v, nil
	}
	if len(res.Content) == 0 {
		return nil, nil
	}
	if !allText {
		items := make([]any, len(res.Content))
		for i, item := range res.Content {
			v, err := engine.DecodeValue(item)
			if err != nil {
				return nil, engine.Errorf(engine.ProviderResponseError, "MCP tool '%s' returned a malformed content item: %v", tool, err)
			}
			items[i] = v
		}
		return items, nil
	}
	decoded := make([]any, len(texts))
	for i, t := range texts {
		decoded[i] = decodeText(t)
	}
	if len(decoded) == 1 {
		return decoded[0], nil
	}
	return decoded, nil
}

// decodeText decodes one text item: JSON first, then a Python literal,
// else the text itself, unstripped.
func decodeText(text string) any {
	s := strings.TrimSpace(text)
	if v, err := engine.DecodeValue([]byte(s)); err == nil {
		return v
	}
	if v, ok := parsePyLiteral(s); ok {
		return v
	}
	return text
}
