package engine_test

import (
	"context"
	"testing"

	"github.com/treelang/treelang/engine"
	"github.com/treelang/treelang/engine/tools"
)

func TestSmoke(t *testing.T) {
	progs := []string{
		`{"type":"program","mode":"single","body":[{"type":"function","name":"add","params":[{"type":"function","name":"multiply","params":[{"type":"value","name":"a","value":12},{"type":"value","name":"b","value":6}]},{"type":"value","name":"c","value":4}]}]}`,
		`{"type":"program","mode":"single","body":[{"type":"map","function":{"type":"lambda","params":["x"],"body":{"type":"function","name":"identity","params":[{"type":"value","name":"x","value":null}]}},"iterable":{"type":"function","name":"range","params":[{"type":"value","name":"n","value":5}]}}]}`,
		`{"schema_version":"2.0","definitions":[{"name":"fact","params":["n"],"body":{"type":"conditional","condition":{"type":"tool_call","tool":"less_than","arguments":{"a":{"type":"variable","name":"n"},"b":{"type":"literal","value":2}}},"true_branch":{"type":"literal","value":1},"false_branch":{"type":"tool_call","tool":"multiply","arguments":{"a":{"type":"variable","name":"n"},"b":{"type":"call","function":"fact","arguments":[{"type":"tool_call","tool":"subtract","arguments":{"a":{"type":"variable","name":"n"},"b":{"type":"literal","value":1}}}]}}}}}],"body":[{"type":"call","function":"fact","arguments":[{"type":"literal","value":25}]}]}`,
	}
	for _, src := range progs {
		p, err := engine.ParseProgram([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		v, err := engine.Eval(context.Background(), p, tools.Builtins(), engine.Options{})
		b, _ := engine.EncodeValue(v)
		t.Logf("%s %v", b, err)
	}
}
