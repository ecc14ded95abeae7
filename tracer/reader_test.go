package tracer

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func readErr(data string) (*Reader, []*Event, error) {
	r := NewReader(strings.NewReader(data))
	events, err := r.ReadAll()
	return r, events, err
}

func TestReaderHeader(t *testing.T) {
	event := `{"seq":1,"kind":"run.start"}` + "\n"
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "line 1: missing trace header: the input is empty"},
		{"event first", event, "line 1: missing trace header: the first line is an event"},
		{"not an object", "hello\n", "line 1: missing trace header: not a JSON object"},
		{"no format", `{"version":1}` + "\n", `line 1: missing trace header: no "format"`},
		{"other format", `{"format":"treelang-fixture","version":1}` + "\n", `line 1: format "treelang-fixture" is not a treelang trace`},
		{"newer", `{"format":"treelang-trace","version":2}` + "\n" + event, "line 1: trace version 2 is newer than this program reads (version 1)"},
		{"no version", `{"format":"treelang-trace"}` + "\n", `line 1: trace header has no "version"`},
		{"version 0", `{"format":"treelang-trace","version":0}` + "\n", "line 1: invalid trace version 0"},
		{"bad version", `{"format":"treelang-trace","version":"1"}` + "\n", `line 1: malformed trace header: field "version"`},
		{"truncated", `{"format":"treelang-tr`, "line 1: truncated trace header"},
		{"garbage after", `{"format":"treelang-trace","version":1} x` + "\n", "line 1: malformed trace header: column 41: unexpected 'x' after the object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readErr(tt.data)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v\nwant prefix %s", err, tt.want)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != 1 {
				t.Errorf("not a line-1 *LineError: %T", err)
			}
		})
	}
	// A header alone, even without its newline, is an empty trace.
	for _, data := range []string{header, strings.TrimSuffix(header, "\n"), "\xef\xbb\xbf" + header} {
		r, events, err := readErr(data)
		if err != nil || len(events) != 0 || r.Version() != 1 || r.Warning() != "" {
			t.Errorf("%q: %v %d %q", data, err, len(events), r.Warning())
		}
	}
}

func TestReaderTruncatedLastLine(t *testing.T) {
	want := sampleEvents()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := CreateJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		w.Write(e)
	}
	w.Close()
	data, _ := os.ReadFile(path)
	// Cut the file in the middle of the last line.
	cut := len(data) - 20
	if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	got, warning, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(data, []byte("\n"))
	if wantWarn := "line " + strconv.Itoa(lines) + ": truncated last line ignored"; warning != wantWarn {
		t.Errorf("warning %q, want %q", warning, wantWarn)
	}
	sameEvents(t, got, want[:len(want)-1])

	// A complete last line without its newline is read, without warning.
	got, warning, err = func() ([]*Event, string, error) {
		r := NewReader(bytes.NewReader(bytes.TrimSuffix(data, []byte("\n"))))
		ev, err := r.ReadAll()
		return ev, r.Warning(), err
	}()
	if err != nil || warning != "" {
		t.Fatal(err, warning)
	}
	sameEvents(t, got, want)

	// Every cut leaves a readable prefix.
	for cut := len(header); cut < len(data); cut++ {
		r := NewReader(bytes.NewReader(data[:cut]))
		events, err := r.ReadAll()
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		complete := bytes.Count(data[len(header):cut], []byte("\n"))
		if len(events) < complete || len(events) > complete+1 {
			t.Fatalf("cut at %d: %d events, %d complete lines", cut, len(events), complete)
		}
	}
}

func TestReaderMalformedLine(t *testing.T) {
	ok := `{"seq":1,"kind":"run.start"}`
	tests := []struct {
		line, want string
	}{
		{`{"seq":2,"kind":"node.enter"`, "line 3: column 29: expected ',' or '}', found end of line"},
		{`{"seq":"two","kind":"node.enter"}`, `line 3: field "seq": column 8: malformed number`},
		{`{"seq":-2,"kind":"node.enter"}`, `line 3: field "seq": want a non-negative integer, found -2`},
		{`{"seq":2,"kind":"node.entre"}`, `line 3: field "kind": unknown event kind "node.entre"`},
		{`{"seq":2,"kind":"node.enter","site":"body"}`, `line 3: field "site": invalid site "body": path must start with '/'`},
		{`{"seq":2,"kind":"node.enter","time":"yesterday"}`, `line 3: field "time": want an RFC 3339 time, found "yesterday"`},
		{`{"seq":2,"kind":"node.enter","data":[1]}`, `line 3: field "data": want an object, found '['`},
		{`{"seq":2,"kind":"node.enter","attempt":1.5}`, `line 3: field "attempt": want an integer, found 1.5`},
		{`{"seq":2,"kind":"node.enter","output":"a` + "\x01" + `"}`, `line 3: field "output": column 41: control character 0x01 in string`},
		{`{"seq":2,"kind":"node.enter","outcome":{"success":1}}`, `line 3: field "outcome": column 51: expected true or false, found '1'`},
		{`{"seq":2,"kind":"node.enter"} {}`, `line 3: column 31: unexpected '{' after the object`},
		{`[1]`, `line 3: column 1: expected '{', found '['`},
	}
	for _, tt := range tests {
		data := header + ok + "\n" + tt.line + "\n" + ok + "\n"
		_, events, err := readErr(data)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.line, err, tt.want)
		}
		if len(events) != 1 {
			t.Errorf("%s: %d events before the error", tt.line, len(events))
		}
	}
}

func TestReaderDetails(t *testing.T) {
	long := strings.Repeat("y", 200<<10)
	data := header + "\n" +
		`{"seq":1,"kind":"node.enter","future_field":{"a":[1,2]},"branch":null}` + "\r\n" +
		"   \n" +
		`{"seq":2,"kind":"node.exit","message":"` + long + `"}` + "\n" +
		`{"seq":3,"kind":"tool.attempt.start","attempt":2,"site":"/b[1,2]#1"}` + "\n" +
		`{"seq":4,"kind":"tool.attempt.start","site":"/b#3","arguments":{"s":"\u00e9\ud83d\ude00\ud800x\/"}}` + "\n"
	r, events, err := readErr(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || r.Warning() != "" {
		t.Fatalf("%d events, warning %q", len(events), r.Warning())
	}
	if events[0].Branch != -1 {
		t.Errorf("branch %d, want -1", events[0].Branch)
	}
	if events[1].Message != long {
		t.Errorf("long line lost")
	}
	if s := events[2].Site; s.Attempt != 2 || s.Path != "/b" || len(s.Iter) != 2 {
		t.Errorf("site %+v", s)
	}
	if s := events[3].Site; s.Attempt != 3 {
		t.Errorf("site %+v", s)
	}
	if s := events[3].Arguments.(map[string]any)["s"]; s != "é😀\ufffdx/" {
		t.Errorf("string %q", s)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the end: %v", err)
	}
}

// errReader fails after its data.
type errReader struct{ r io.Reader }

func (e errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = errors.New("device gone")
	}
	return n, err
}

func TestReaderIOError(t *testing.T) {
	r := NewReader(errReader{strings.NewReader(header + `{"seq":1,"kind":"run.start"}` + "\n")})
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || err.Error() != "device gone" {
		t.Fatalf("got %v", err)
	}
}

func TestParseTimeUTCAgreesWithTimeParse(t *testing.T) {
	for _, s := range []string{
		"2025-03-04T05:06:07Z", "2025-03-04T05:06:07.1Z", "2025-03-04T05:06:07.123456789Z",
		"2024-02-29T23:59:59.5Z", "2025-02-29T00:00:00Z", "2025-13-01T00:00:00Z", "2025-01-01T24:00:00Z",
		"2025-01-01T00:00:60Z", "0000-01-01T00:00:00Z", "2025-01-01T00:00:00.Z", "2025-01-01T00:00:00.1234567890Z",
		"2025-01-01t00:00:00Z", "2025-01-01T00:00:00+02:00", "2025-1-01T00:00:00Z", "+025-01-01T00:00:00Z",
	} {
		want, werr := time.Parse(time.RFC3339Nano, s)
		got, ok := parseTimeUTC([]byte(s))
		if ok && (werr != nil || !got.Equal(want) || got.Location() != want.Location()) {
			t.Errorf("%s: fast %v, time.Parse %v %v", s, got, want, werr)
		}
		if !ok && werr == nil && strings.HasSuffix(s, "Z") && len(s) <= 30 && !strings.Contains(s, "t") {
			t.Logf("%s: left to time.Parse", s)
		}
	}
}

func TestReaderBatches(t *testing.T) {
	// Enough lines for several read-ahead batches decoded in parallel.
	var events []*Event
	for i := range 3*batchLines + 17 {
		e := benchEvent()
		e.Seq = uint64(i + 1)
		e.Time = t0.Add(time.Duration(i) * time.Microsecond)
		events = append(events, e)
	}
	data := writeTrace(t, events)
	got, warning := readTrace(t, data)
	if warning != "" {
		t.Error(warning)
	}
	sameEvents(t, got, events)

	lines := bytes.SplitAfter(data, []byte("\n"))
	// A malformed line late in a batch: the events before it, then the error.
	for _, bad := range []int{2, batchLines - 1, batchLines + 300, len(lines) - 2} {
		mangled := bytes.Join([][]byte{
			bytes.Join(lines[:bad], nil),
			[]byte(`{"seq":1,"kind":` + "\n"),
			bytes.Join(lines[bad+1:], nil),
		}, nil)
		r := NewReader(bytes.NewReader(mangled))
		got, err := r.ReadAll()
		want := "line " + strconv.Itoa(bad+1) + ": field \"kind\": column 17: expected a string, found end of line"
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		if len(got) != bad-1 {
			t.Errorf("line %d: %d events before the error", bad+1, len(got))
		}
	}
	// A truncated last line after several batches.
	cut := data[:len(data)-30]
	r := NewReader(bytes.NewReader(cut))
	got, err := r.ReadAll()
	if err != nil || len(got) != len(events)-1 {
		t.Fatalf("%v, %d events", err, len(got))
	}
	if want := "line " + strconv.Itoa(len(events)+1) + ": truncated last line ignored"; r.Warning() != want {
		t.Errorf("warning %q, want %q", r.Warning(), want)
	}
}
