package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/model"
)

// A Planner asks the model behind a transport for a program and checks it.
// Here the model is an OpenAI-compatible test server on loopback that
// answers with a fenced program; a real caller would configure the
// transport with model.ConfigFromEnv.
func ExamplePlanner() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := "```json\n" + `{"type": "program", "mode": "single", "body": [
  {"type": "function", "name": "add", "params": [{"type": "value", "name": "a", "value": 2}, {"type": "value", "name": "b", "value": 3}]}]}` + "\n```"
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": reply}}},
		})
	}))
	defer srv.Close()

	transport, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-example", Model: "gpt-4o-mini"})
	if err != nil {
		fmt.Println(err)
		return
	}
	add, _ := engine.ParseToolDefinition([]byte(`{"name": "add", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}`), "")
	planner := &model.Planner{
		Transport: transport,
		Model:     "gpt-4o-mini",
		Validate: func(program []byte) error {
			_, err := engine.ParseProgram(program)
			return err
		},
	}
	plan, err := planner.Plan(context.Background(), "What is 2 plus 3?", []*engine.ToolDefinition{add})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d attempt(s)\n%s\n", len(plan.Attempts), plan.Program)
	// Output:
	// 1 attempt(s)
	// {
	//   "type": "program",
	//   "mode": "single",
	//   "body": [
	//     {
	//       "type": "function",
	//       "name": "add",
	//       "params": [
	//         {
	//           "type": "value",
	//           "name": "a",
	//           "value": 2
	//         },
	//         {
	//           "type": "value",
	//           "name": "b",
	//           "value": 3
	//         }
	//       ]
	//     }
	//   ]
	// }
}
