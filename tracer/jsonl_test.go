package tracer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sameEvents compares events field by field, times by instant.
func sameEvents(t *testing.T, got, want []*Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := *got[i], *want[i]
		if !g.Time.Equal(w.Time) {
			t.Errorf("event %d: time %v, want %v", i, g.Time, w.Time)
		}
		g.Time, w.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			t.Errorf("event %d differs:\n got %s\nwant %s", i, gj, wj)
		}
	}
}

func writeTrace(t testing.TB, events []*Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	for _, e := range events {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readTrace(t testing.TB, data []byte) ([]*Event, string) {
	t.Helper()
	r := NewReader(bytes.NewReader(data))
	events, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return events, r.Warning()
}

func TestJSONLRoundTrip(t *testing.T) {
	want := sampleEvents()
	data := writeTrace(t, want)
	got, warning := readTrace(t, data)
	if warning != "" {
		t.Errorf("warning %q", warning)
	}
	sameEvents(t, got, want)
}

func TestJSONLLineShape(t *testing.T) {
	data := writeTrace(t, sampleEvents())
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != `{"format":"treelang-trace","version":1}` {
		t.Errorf("header %s", lines[0])
	}
	want := map[int]string{
		1: `{"seq":1,"time":"2025-03-04T05:06:07.123456789Z","kind":"run.start","data":{"program_hash":"abc","schema_version":"1.0"}}`,
		3: `{"seq":3,"time":"2025-03-04T05:06:07.125456789Z","kind":"tool.attempt.start","site":"/body/0/function/body[3]","attempt":1,"tool":"add",` +
			`"arguments":{"a":12345678901234567890123,"b":0.30000000000000004,"c":[true,false,null,"x\n\"y\"` + "\u2028" + `é"]},"branch":0,"depth":3,"counters":{"nodes":4,"tool_calls":1},"max_attempts":3}`,
		4: `{"seq":4,"time":"2025-03-04T05:06:07.126456789Z","kind":"tool.attempt.end","site":"/body/0/function/body[3]","attempt":1,"tool":"add",` +
			`"error":{"type":"ToolExecutionError","message":"flaky: try again"},"branch":0,"depth":3,"duration_ms":1.234567}`,
		5: `{"seq":5,"time":"2025-03-04T05:06:07.127456789Z","kind":"retry.backoff.start","site":"/body/0/function/body[3]","attempt":1,"tool":"add","delay_ms":250.5,"branch":0}`,
		6: `{"seq":6,"time":"2025-03-04T05:06:07.128456789Z","kind":"tool.attempt.end","site":"/body/0/function/body[3]","attempt":2,"tool":"add","output":null,"branch":0}`,
		7: `{"seq":7,"time":"2025-03-04T05:06:07.129456789Z","kind":"cancel","site":"/body/1","branch":1,"reason":"sibling_failure","cause":"/body/0[3]#2"}`,
		8: `{"seq":8,"time":"2025-03-04T05:06:07.130456789Z","kind":"branch.outcome","branch":1,"outcome":{"success":false,"error_type":"TimeoutError","error_message":"too slow"}}`,
		9: `{"seq":9,"time":"2025-03-04T05:06:07.130456789Z","kind":"branch.outcome","branch":0,"outcome":{"success":true,"value":[1,2.50]}}`,
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, lines[i], w)
		}
	}
	// Every line is valid JSON for other tools too.
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not valid JSON: %s", i+1, l)
		}
	}
}

func TestJSONNumberRoundTrip(t *testing.T) {
	for _, s := range []string{"12345678901234567890123", "0.30000000000000004", "-0", "1E+400", "-1.5e-7", "0", "1.000"} {
		e := &Event{Seq: 1, Kind: ToolAttemptEnd, Branch: -1, HasOutput: true, Output: json.Number(s),
			Arguments: map[string]any{"n": json.Number(s)}}
		got, _ := readTrace(t, writeTrace(t, []*Event{e}))
		if out, ok := got[0].Output.(json.Number); !ok || string(out) != s {
			t.Errorf("output %#v, want json.Number(%q)", got[0].Output, s)
		}
		if arg := got[0].Arguments.(map[string]any)["n"]; arg != json.Number(s) {
			t.Errorf("argument %#v, want json.Number(%q)", arg, s)
		}
	}
}

func TestJSONLGoValues(t *testing.T) {
	// Values that are not decoded JSON still encode, through encoding/json.
	a, b := 0.1, 0.2
	e := &Event{Seq: 1, Kind: NodeExit, Branch: -1, HasOutput: true,
		Output: map[string]any{"i": 3, "f": a + b, "s": []string{"a"}, "n": int64(-4)}}
	got, _ := readTrace(t, writeTrace(t, []*Event{e}))
	want := map[string]any{"i": json.Number("3"), "f": json.Number("0.30000000000000004"), "s": []any{"a"}, "n": json.Number("-4")}
	if !reflect.DeepEqual(got[0].Output, want) {
		t.Errorf("got %#v", got[0].Output)
	}
}

func TestJSONLBadValueSkipsEvent(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	bad := &Event{Seq: 1, Kind: NodeExit, Branch: -1, HasOutput: true, Output: json.Number("12abc")}
	if err := w.Write(bad); err == nil {
		t.Fatal("invalid json.Number accepted")
	}
	if err := w.Write(&Event{Seq: 2, Kind: RunEnd, Branch: -1}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, _ := readTrace(t, buf.Bytes())
	if len(got) != 1 || got[0].Seq != 2 {
		t.Fatalf("got %d events", len(got))
	}
}

// countingWriter records how many bytes reached it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

func TestJSONLFlushPoints(t *testing.T) {
	var out countingWriter
	w := NewJSONLWriter(&out)
	if out.Len() != len(header) {
		t.Fatalf("header not written at once: %q", out.String())
	}
	w.Write(&Event{Seq: 1, Kind: RunStart, Branch: -1})
	w.Write(&Event{Seq: 2, Kind: NodeEnter, Branch: -1})
	if out.Len() != len(header) {
		t.Errorf("flushed before a flush point")
	}
	flushers := []*Event{
		{Kind: RunEnd, Branch: -1},
		{Kind: Cancel, Branch: -1},
		{Kind: LimitExceeded, Branch: -1},
		{Kind: ReplayMismatch, Branch: -1},
		{Kind: ToolAttemptEnd, Branch: -1, Error: &ErrorInfo{Type: "ToolExecutionError"}},
		{Kind: BranchOutcome, Branch: 0, Outcome: &Outcome{ErrorType: "ValueError"}},
	}
	for _, e := range flushers {
		w.Write(&Event{Seq: 3, Kind: NodeEnter, Branch: -1})
		before := out.Len()
		w.Write(e)
		if out.Len() == before {
			t.Errorf("%s (error %v) did not flush", e.Kind, e.Error != nil)
		}
		if !bytes.HasSuffix(out.Bytes(), []byte("}\n")) {
			t.Errorf("flushed a partial line")
		}
	}
	// Buffer threshold.
	writes := out.writes
	big := strings.Repeat("x", 1000)
	for range 100 {
		w.Write(&Event{Seq: 9, Kind: NodeEnter, Branch: -1, Message: big})
	}
	if out.writes == writes {
		t.Errorf("100 KB buffered without a flush")
	}
	if out.writes > writes+2 {
		t.Errorf("%d writes for 100 KB", out.writes-writes)
	}
	// Flush every event.
	w.SetFlushEveryEvent(true)
	before := out.Len()
	w.Flush()
	before = out.Len()
	w.Write(&Event{Seq: 10, Kind: NodeEnter, Branch: -1})
	if out.Len() == before {
		t.Errorf("SetFlushEveryEvent did not flush")
	}
	w.Close()
	if err := w.Write(&Event{Seq: 11, Kind: RunEnd}); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
}

func TestJSONLTransform(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	w.SetTransform(func(e *Event) *Event {
		if e.Kind == NodeEnter {
			return nil
		}
		c := e.Clone()
		if args, ok := c.Arguments.(map[string]any); ok {
			args = CloneValue(args).(map[string]any)
			args["key"] = "[REDACTED]"
			c.Arguments = args
		}
		return c
	})
	orig := &Event{Seq: 1, Kind: ToolAttemptStart, Branch: -1, Arguments: map[string]any{"key": "sk-123", "q": "x"}}
	w.Write(&Event{Seq: 0, Kind: NodeEnter, Branch: -1})
	w.Write(orig)
	w.Close()
	if orig.Arguments.(map[string]any)["key"] != "sk-123" {
		t.Errorf("transform changed the original event")
	}
	got, _ := readTrace(t, buf.Bytes())
	if len(got) != 1 || got[0].Arguments.(map[string]any)["key"] != "[REDACTED]" {
		t.Errorf("got %+v", got)
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestJSONLWriteErrorIsSticky(t *testing.T) {
	w := NewJSONLWriter(&failingWriter{n: len(header)})
	if err := w.Write(&Event{Kind: RunEnd}); err == nil || err.Error() != "disk full" {
		t.Fatalf("got %v", err)
	}
	if err := w.Write(&Event{Kind: NodeEnter}); err == nil {
		t.Fatal("error not sticky")
	}
	if err := w.Close(); err == nil {
		t.Fatal("close hid the error")
	}
}

func TestCreateJSONLAndReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.trace.jsonl")
	w, err := CreateJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != header {
		t.Errorf("header not on disk after CreateJSONL: %q", data)
	}
	want := sampleEvents()
	for _, e := range want {
		w.Write(e)
	}
	// run.end flushed everything even before Close.
	got, warning, err := ReadFile(path)
	if err != nil || warning != "" {
		t.Fatal(err, warning)
	}
	sameEvents(t, got, want)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	if _, err := CreateJSONL(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Error("CreateJSONL in a missing directory succeeded")
	}
	if _, _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("ReadFile of a missing file succeeded")
	}
}

func TestDurationAndDelayExact(t *testing.T) {
	for _, d := range []time.Duration{1, 999, 1000000, 1500000, -2500001, 1<<62 + 7, -1 << 63, 1<<63 - 1} {
		e := &Event{Kind: NodeExit, Branch: -1, Duration: d, DelayMS: float64(d) / 3}
		got, _ := readTrace(t, writeTrace(t, []*Event{e}))
		if got[0].Duration != d || got[0].DelayMS != e.DelayMS {
			t.Errorf("duration %d -> %d, delay %v -> %v", d, got[0].Duration, e.DelayMS, got[0].DelayMS)
		}
	}
}

var _ io.Writer = (*countingWriter)(nil)

func TestAppendTimeAgreesWithFormat(t *testing.T) {
	zone := time.FixedZone("X", 5*3600+30*60)
	for _, tm := range []time.Time{t0, t0.Truncate(time.Second), t0.Add(-123000), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(2024, 2, 29, 1, 2, 3, 40, zone),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Now()} {
		got := string(appendTime(nil, tm))
		if want := tm.UTC().Format(time.RFC3339Nano); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
