package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeTree checks the program scanner against encoding/json: the
// same inputs are valid, and valid ones decode to the same value.
func FuzzDecodeTree(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.5e-3,-0,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true,"e":false}}`,
		`"\ud800"`, `"bad \x7f"`, `01`, `1.`, `-`, `{"a" 1}`, `[1,]`, `{"a":1,"a":2}`, "\"\xff\"", ` 7 `, `1 2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeTree(data)
		valid := json.Valid(data)
		if valid != (err == nil) {
			if err != nil && bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'}) >= MaxNesting {
				return // deeper than we accept
			}
			t.Fatalf("json.Valid=%v but decodeTree error=%v for %q", valid, err, data)
		}
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := v.value(); !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeTree %#v, encoding/json %#v for %q", got, want, data)
		}
	})
}
