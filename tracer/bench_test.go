package tracer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchEvent is a typical tool attempt: a site with an iteration index,
// arguments with exact numbers, budget counters.
func benchEvent() *Event {
	return &Event{
		Kind: ToolAttemptStart, Site: Site{Path: "/body/0/function/body", Iter: []int{3}, Attempt: 1},
		Tool: "add", Branch: 0, Depth: 3, Requested: 3,
		Arguments: map[string]any{"a": json.Number("12345678901234567890123"), "b": json.Number("0.30000000000000004")},
		Counters:  &Counters{Nodes: 4, ToolCalls: 1},
	}
}

// BenchmarkJSONLFile measures events per second through a Tracer into a
// JSONL file.
func BenchmarkJSONLFile(b *testing.B) {
	w, err := CreateJSONL(filepath.Join(b.TempDir(), "bench.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	tr := New(w)
	ctx := context.Background()
	events := make([]Event, b.N)
	proto := benchEvent()
	for i := range events {
		events[i] = *proto
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range events {
		tr.Emit(ctx, &events[i])
	}
	if err := tr.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEmitMemory measures Emit into the memory sink with a gate that
// pauses nowhere.
func BenchmarkEmitMemory(b *testing.B) {
	mem := NewMemory()
	tr := New(mem)
	tr.SetGate(NewGate())
	ctx := context.Background()
	events := make([]Event, b.N)
	for i := range events {
		events[i] = Event{Kind: NodeEnter, Branch: -1}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range events {
		tr.Emit(ctx, &events[i])
	}
}

// BenchmarkMillionEvents writes 1,000,000 events to a file and streams
// them back; the time per op is the total for the million.
func BenchmarkMillionEvents(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "million.jsonl")
	proto := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		w, err := CreateJSONL(path)
		if err != nil {
			b.Fatal(err)
		}
		tr := New(w)
		cpu0 := cpuSeconds()
		start := time.Now()
		for range n {
			e := *proto
			tr.Emit(context.Background(), &e)
		}
		tr.Emit(context.Background(), &Event{Kind: RunEnd, Branch: -1})
		if err := tr.Close(); err != nil {
			b.Fatal(err)
		}
		wrote := time.Since(start)
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r := NewReader(f)
		count := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			count++
		}
		f.Close()
		if count != n+1 {
			b.Fatalf("read %d events", count)
		}
		b.ReportMetric(wrote.Seconds(), "write-s")
		b.ReportMetric(time.Since(start).Seconds()-wrote.Seconds(), "read-s")
		b.ReportMetric(cpuSeconds()-cpu0, "cpu-s")
	}
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
	}
}

// BenchmarkTimeline measures the text rendering of events.
func BenchmarkTimeline(b *testing.B) {
	tl := NewTimeline(bufio.NewWriter(io.Discard))
	e := benchEvent()
	e.Time = t0
	b.ReportAllocs()
	for b.Loop() {
		tl.Write(e)
	}
}

// BenchmarkReadJSONL measures events per second read back from a trace in
// memory (the decoding cost alone).
func BenchmarkReadJSONL(b *testing.B) {
	const n = 100_000
	proto := benchEvent()
	proto.Time = t0
	events := make([]*Event, n)
	for i := range events {
		e := *proto
		e.Seq = uint64(i + 1)
		events[i] = &e
	}
	data := writeTrace(b, events)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	read := 0
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			read++
		}
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "events/s")
}
