package tracer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMemory(t *testing.T) {
	m := NewMemory()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m.Write(&Event{})
				_ = m.Events()
			}
		})
	}
	wg.Wait()
	if m.Len() != 800 || len(m.Events()) != 800 {
		t.Fatalf("len %d", m.Len())
	}
	snap := m.Events()
	m.Write(&Event{})
	if len(snap) != 800 {
		t.Error("snapshot changed")
	}
	if m.Flush() != nil || m.Close() != nil {
		t.Error("memory flush/close error")
	}
}

type errSink struct{ err error }

func (s errSink) Write(*Event) error { return s.err }
func (s errSink) Flush() error       { return s.err }
func (s errSink) Close() error       { return s.err }

func TestMulti(t *testing.T) {
	a, b := NewMemory(), NewMemory()
	boom := errors.New("boom")
	m := Multi(a, errSink{boom}, b)
	if err := m.Write(&Event{Seq: 1}); !errors.Is(err, boom) {
		t.Errorf("write: %v", err)
	}
	if a.Len() != 1 || b.Len() != 1 {
		t.Error("a failing sink stopped the others")
	}
	if err := m.Flush(); !errors.Is(err, boom) {
		t.Errorf("flush: %v", err)
	}
	if err := m.Close(); !errors.Is(err, boom) {
		t.Errorf("close: %v", err)
	}
	if err := Multi(a, b).Write(&Event{}); err != nil {
		t.Error(err)
	}
}

func TestChannelSinkNeverDrops(t *testing.T) {
	const writers, each = 8, 5000
	s := NewChannelSink(context.Background())
	tr := New(s)
	got := make(chan int)
	go func() {
		var last uint64
		n := 0
		for e := range s.C() {
			if e.Seq != last+1 {
				t.Errorf("seq %d after %d", e.Seq, last)
			}
			last = e.Seq
			n++
			if n%1000 == 0 {
				time.Sleep(time.Millisecond) // a slow UI
			}
		}
		got <- n
	}()
	var wg sync.WaitGroup
	start := time.Now()
	for range writers {
		wg.Go(func() {
			for range each {
				tr.Emit(context.Background(), &Event{Kind: NodeEnter, Branch: -1})
			}
		})
	}
	wg.Wait()
	emitTime := time.Since(start)
	tr.Close()
	if n := <-got; n != writers*each {
		t.Fatalf("consumer got %d of %d events", n, writers*each)
	}
	<-s.Done()
	if err := s.Write(&Event{}); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	t.Logf("emitting %d events took %v", writers*each, emitTime)
}

func TestChannelSinkWriteDoesNotBlock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := NewChannelSink(ctx)
	done := make(chan struct{})
	go func() {
		for range 10000 { // nobody reads
			s.Write(&Event{})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked without a consumer")
	}
	cancel() // the consumer is gone: the forwarder stops
	<-s.Done()
	for range s.C() {
	}
}

func TestChannelSinkCloseDeliversQueued(t *testing.T) {
	s := NewChannelSink(context.Background())
	for i := range 100 {
		s.Write(&Event{Seq: uint64(i + 1)})
	}
	s.Close()
	n := 0
	for e := range s.C() {
		n++
		if e.Seq != uint64(n) {
			t.Fatalf("seq %d at %d", e.Seq, n)
		}
	}
	if n != 100 {
		t.Fatalf("delivered %d of 100", n)
	}
	if s.Flush() != nil || s.Close() != nil {
		t.Error("flush/close after close")
	}
}

func TestTimeline(t *testing.T) {
	var b strings.Builder
	if err := WriteTimeline(&b, sampleEvents()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"     1     +0.000ms  run.start\n",
		"     2     +0.001ms    node.enter /body/0 (map) branch 0\n",
		`     3     +2.000ms        tool.attempt.start /body/0/function/body[3] add attempt 1/3 branch 0 args={"a":12345678901234567890123,"b":0.30000000000000004,"c":[true,false,null,"x\n\…` + "\n",
		"tool.attempt.end /body/0/function/body[3] add attempt 1 branch 0 error ToolExecutionError: flaky: try again (1.234567ms)\n",
		"retry.backoff.start /body/0/function/body[3] add attempt 1 branch 0 delay 250.5ms\n",
		"add attempt 2 branch 0 => null\n",
		"cancel /body/1 branch 1 reason=sibling_failure cause=/body/0[3]#2\n",
		"branch.outcome branch 1 failed TimeoutError: too slow\n",
		"branch.outcome branch 0 ok [1,2.50]\n",
		"limit.exceeded nodes=9 tool_calls=5 — max_tool_calls 5 reached\n",
		"run.end => {\"ok\":true} nodes=9 tool_calls=5 (9ms)\n",
		"---\nresult: {\"ok\":true}\nevents: 11, tool attempts: 1, retries: 1, failures: 1, cancellations: 1, failed branches: 1, limits exceeded: 1, duration: 9ms\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q\n%s", want, out)
		}
	}
	// Streaming from a reader gives the same text.
	var s strings.Builder
	if err := CopyTimeline(&s, NewReader(strings.NewReader(string(writeTrace(t, sampleEvents()))))); err != nil {
		t.Fatal(err)
	}
	if s.String() != out {
		t.Errorf("CopyTimeline differs:\n%s", s.String())
	}
	// A failed run.
	var f strings.Builder
	WriteTimeline(&f, []*Event{{Seq: 1, Time: t0, Kind: RunEnd, Branch: -1, Error: &ErrorInfo{"ExecutionLimitError", "max_nodes\nexceeded"}}})
	if !strings.Contains(f.String(), "error: ExecutionLimitError: max_nodes exceeded\n") {
		t.Errorf("failed run:\n%s", f.String())
	}
}
