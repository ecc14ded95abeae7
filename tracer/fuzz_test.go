package tracer

import (
	"bytes"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the trace reader: it must never
// panic, and a trace it reads without error must survive
// read -> write -> read unchanged.
func FuzzReader(f *testing.F) {
	f.Add(writeTrace(f, sampleEvents()))
	f.Add([]byte(header))
	f.Add([]byte(""))
	f.Add([]byte(header + `{"seq":1,"kind":"node.enter","site":"/a[1,2]#3","duration_ms":1e3,"delay_ms":-0}` + "\n"))
	f.Add([]byte(header + `{"seq":1,"kind":"node.enter","output":{"s":"\ud800\u00e9","n":[1e999,-0.0]}}` + "\n" + `{"seq":2,"kind":"ru`))
	f.Add([]byte(header + `{"seq":1,"kind":"branch.outcome","outcome":{"success":false,"value":null},"data":{}}`))
	f.Add([]byte(header + "{\"seq\":1,\"kind\":\"run.end\",\"message\":\"\xff\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		var events []*Event
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return // an error is fine; a panic is not
			}
			events = append(events, e)
		}
		var buf bytes.Buffer
		w := NewJSONLWriter(&buf)
		for _, e := range events {
			if err := w.Write(e); err != nil {
				t.Fatalf("writing an event that was read: %v", err)
			}
		}
		w.Close()
		again := NewReader(&buf)
		got, err := again.ReadAll()
		if err != nil {
			t.Fatalf("reading back: %v\n%s", err, buf.Bytes())
		}
		if again.Warning() != "" {
			t.Fatalf("warning on read back: %s", again.Warning())
		}
		sameEvents(t, got, events)
	})
}
