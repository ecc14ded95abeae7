package tracer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// waitPaused waits until the gate is paused and returns the event.
func waitPaused(t *testing.T, g *Gate) *Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e := g.Paused(); e != nil {
			return e
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Fatal("the run never paused")
	return nil
}

// waitWaiting waits until n events are held at the gate.
func waitWaiting(t *testing.T, g *Gate, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		k := len(g.waiting)
		g.mu.Unlock()
		if k == n {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Fatalf("never %d events waiting", n)
}

func TestGateStepping(t *testing.T) {
	g := NewGate()
	g.SetStepping(true)
	tr := New(NewMemory())
	tr.SetGate(g)
	var pauses []uint64
	var mu sync.Mutex
	announced := make(chan struct{}, 10)
	g.OnPause(func(e *Event, hit *Breakpoint) {
		if hit != nil {
			t.Errorf("hit %v in step mode", hit)
		}
		mu.Lock()
		pauses = append(pauses, e.Seq)
		mu.Unlock()
		announced <- struct{}{}
	})
	passed := make(chan uint64, 10)
	go func() {
		for range 3 {
			e := &Event{Kind: NodeEnter, Branch: -1}
			tr.Emit(context.Background(), e)
			passed <- e.Seq
		}
		close(passed)
	}()
	for want := uint64(1); want <= 3; want++ {
		<-announced
		e := g.Paused()
		if e.Seq != want {
			t.Fatalf("paused at %d, want %d", e.Seq, want)
		}
		select {
		case s := <-passed:
			t.Fatalf("event %d passed while paused", s)
		case <-time.After(5 * time.Millisecond):
		}
		g.Step()
		if s := <-passed; s != want {
			t.Fatalf("released %d", s)
		}
	}
	if _, ok := <-passed; ok {
		t.Fatal("extra event")
	}
	// After the last Step the gate pauses at the next event to come.
	if !g.armed.Load() {
		t.Error("not armed after Step")
	}
	g.Continue()
	if err := tr.Emit(context.Background(), &Event{Kind: NodeEnter}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(pauses, []uint64{1, 2, 3}) {
		t.Errorf("OnPause saw %v", pauses)
	}
}

func TestGateSeveralWaiting(t *testing.T) {
	g := NewGate()
	g.SetStepping(true)
	tr := New(NewMemory())
	tr.SetGate(g)
	const n = 6
	released := make(chan uint64, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			e := &Event{Kind: ToolAttemptStart, Branch: -1}
			if err := tr.Emit(context.Background(), e); err != nil {
				t.Error(err)
			}
			released <- e.Seq
		})
	}
	waitWaiting(t, g, n)
	for want := uint64(1); want <= n; want++ {
		if e := g.Paused(); e == nil || e.Seq != want {
			t.Fatalf("paused at %v, want %d", e, want)
		}
		g.Step()
		if s := <-released; s != want {
			t.Fatalf("released %d, want %d", s, want)
		}
		select {
		case s := <-released:
			t.Fatalf("Step released a second event %d", s)
		case <-time.After(2 * time.Millisecond):
		}
	}
	wg.Wait()
}

func TestGateContinueKeepsBreakpointHits(t *testing.T) {
	g := NewGate()
	g.SetStepping(true)
	g.SetBreakpoints([]Breakpoint{{ID: 1, Kind: BreakTool, Tool: "slow"}})
	var hits []string
	var mu sync.Mutex
	announced := make(chan struct{}, 10)
	g.OnPause(func(e *Event, hit *Breakpoint) {
		mu.Lock()
		defer mu.Unlock()
		if hit != nil {
			hits = append(hits, hit.String()+" at "+e.Tool)
			announced <- struct{}{}
		}
	})
	tr := New()
	tr.SetGate(g)
	released := make(chan string, 4)
	var wg sync.WaitGroup
	for i, tool := range []string{"a", "slow", "b", "slow"} {
		wg.Go(func() {
			tr.Emit(context.Background(), &Event{Kind: ToolAttemptStart, Tool: tool})
			released <- tool
		})
		waitWaiting(t, g, i+1) // queue them in this order
	}
	g.Continue() // releases the paused "a" and "b"; the two "slow" stay
	for range 2 {
		if s := <-released; s == "slow" {
			t.Fatal("released an event a breakpoint holds")
		}
	}
	waitWaiting(t, g, 2)
	if e := waitPaused(t, g); e.Tool != "slow" {
		t.Fatalf("paused at %s", e.Tool)
	}
	<-announced
	g.Continue()
	<-released
	<-announced
	g.Continue()
	<-released
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(hits, []string{"#1 tool slow at slow", "#1 tool slow at slow"}) {
		t.Errorf("hits %q", hits)
	}
}

func TestGatePauseAndStepFromBreakpoint(t *testing.T) {
	g := NewGate()
	tr := New()
	tr.SetGate(g)
	ctx := context.Background()
	emit := func(k Kind) chan error {
		c := make(chan error, 1)
		go func() { c <- tr.Emit(ctx, &Event{Kind: k}) }()
		return c
	}
	// Nothing armed: passes.
	if err := <-emit(NodeEnter); err != nil {
		t.Fatal(err)
	}
	g.Pause()
	c := emit(NodeEnter)
	waitPaused(t, g)
	g.Step() // release, and pause at the next one
	<-c
	c = emit(NodeExit)
	if e := waitPaused(t, g); e.Kind != NodeExit {
		t.Fatalf("paused at %s", e.Kind)
	}
	g.Continue()
	<-c
	if err := <-emit(NodeExit); err != nil {
		t.Fatal(err)
	}
	// Step while running acts as Pause.
	g.Step()
	c = emit(NodeEnter)
	waitPaused(t, g)
	g.Continue()
	<-c
	// SetStepping(false) keeps the current pause; Continue ends it.
	g.SetStepping(true)
	if !g.Stepping() {
		t.Fatal("stepping not on")
	}
	c = emit(NodeEnter)
	waitPaused(t, g)
	g.SetStepping(false)
	select {
	case <-c:
		t.Fatal("SetStepping(false) released the event")
	case <-time.After(2 * time.Millisecond):
	}
	g.Continue()
	<-c
	if g.armed.Load() {
		t.Error("gate still armed")
	}
}

func TestGateCancelWhileWaiting(t *testing.T) {
	g := NewGate()
	g.SetStepping(true)
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	e1, e2 := &Event{Seq: 1}, &Event{Seq: 2}
	done1, done2 := make(chan error), make(chan error)
	go func() { done1 <- g.Wait(ctx1, e1) }()
	waitWaiting(t, g, 1)
	go func() { done2 <- g.Wait(ctx2, e2) }()
	waitWaiting(t, g, 2)
	if g.Paused() != e1 {
		t.Fatal("not paused at the first event")
	}
	cancel1()
	if err := <-done1; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	// The next waiting event becomes the paused one.
	if e := waitPaused(t, g); e != e2 {
		t.Fatalf("paused at %v", e)
	}
	boom := errors.New("deadline")
	cancel2(boom)
	if err := <-done2; err != boom {
		t.Fatalf("got %v", err)
	}
	if g.Paused() != nil {
		t.Error("still paused")
	}
	// An already cancelled context never blocks.
	if err := g.Wait(ctx1, &Event{Seq: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestBreakpointMatches(t *testing.T) {
	fail := &ErrorInfo{Type: "ToolExecutionError"}
	tests := []struct {
		bp   Breakpoint
		e    Event
		want bool
	}{
		{Breakpoint{Kind: BreakTool, Tool: "add"}, Event{Kind: ToolAttemptStart, Tool: "add", Site: Site{Attempt: 1}}, true},
		{Breakpoint{Kind: BreakTool, Tool: "add"}, Event{Kind: ToolAttemptStart, Tool: "sub"}, false},
		{Breakpoint{Kind: BreakTool, Tool: "add"}, Event{Kind: ToolAttemptEnd, Tool: "add"}, false},
		{Breakpoint{Kind: BreakTool}, Event{Kind: ToolAttemptStart, Tool: "sub"}, true},
		{Breakpoint{Kind: BreakTool, Tool: "add", Attempt: 2}, Event{Kind: ToolAttemptStart, Tool: "add", Site: Site{Attempt: 1}}, false},
		{Breakpoint{Kind: BreakTool, Tool: "add", Attempt: 2}, Event{Kind: ToolAttemptStart, Tool: "add", Site: Site{Attempt: 2}}, true},
		{Breakpoint{Kind: BreakTool, Tool: "add", Disabled: true}, Event{Kind: ToolAttemptStart, Tool: "add"}, false},
		{Breakpoint{Kind: BreakNode, Path: "/body/0"}, Event{Kind: NodeEnter, Site: Site{Path: "/body/0", Iter: []int{2}}}, true},
		{Breakpoint{Kind: BreakNode, Path: "/body/0"}, Event{Kind: NodeEnter, Site: Site{Path: "/body/0/params/1"}}, false},
		{Breakpoint{Kind: BreakNode, Path: "/body/0"}, Event{Kind: NodeExit, Site: Site{Path: "/body/0"}}, false},
		{Breakpoint{Kind: BreakNode, Path: "/body/0/"}, Event{Kind: NodeEnter, Site: Site{Path: "/body/0/params/1"}}, true},
		{Breakpoint{Kind: BreakNode, Path: "/body/0/"}, Event{Kind: NodeEnter, Site: Site{Path: "/body/0"}}, true},
		{Breakpoint{Kind: BreakNode, Path: "/body/0/"}, Event{Kind: NodeEnter, Site: Site{Path: "/body/01"}}, false},
		{Breakpoint{Kind: BreakFailure}, Event{Kind: ToolAttemptEnd, Error: fail}, true},
		{Breakpoint{Kind: BreakFailure}, Event{Kind: NodeExit, Error: fail}, true},
		{Breakpoint{Kind: BreakFailure}, Event{Kind: BranchOutcome, Outcome: &Outcome{}}, true},
		{Breakpoint{Kind: BreakFailure}, Event{Kind: BranchOutcome, Outcome: &Outcome{Success: true}}, false},
		{Breakpoint{Kind: BreakFailure}, Event{Kind: ToolAttemptEnd}, false},
		{Breakpoint{Kind: BreakFailure, Tool: "add"}, Event{Kind: ToolAttemptEnd, Tool: "sub", Error: fail}, false},
		{Breakpoint{Kind: BreakRetry}, Event{Kind: RetryBackoffStart}, true},
		{Breakpoint{Kind: BreakRetry}, Event{Kind: RetryBackoffEnd}, false},
		{Breakpoint{Kind: BreakCancel}, Event{Kind: Cancel, Reason: ReasonUser}, true},
		{Breakpoint{Kind: BreakCancel}, Event{Kind: RunEnd}, false},
		{Breakpoint{Kind: BreakFailedOutcome}, Event{Kind: BranchOutcome, Outcome: &Outcome{ErrorType: "ValueError"}}, true},
		{Breakpoint{Kind: BreakFailedOutcome}, Event{Kind: BranchOutcome, Outcome: &Outcome{Success: true}}, false},
		{Breakpoint{Kind: BreakFailedOutcome}, Event{Kind: ToolAttemptEnd, Error: fail}, false},
		{Breakpoint{Kind: BreakMismatch}, Event{Kind: ReplayMismatch}, true},
		{Breakpoint{Kind: BreakMismatch}, Event{Kind: ReplayMatch}, false},
		{Breakpoint{Kind: BreakLimit}, Event{Kind: LimitExceeded}, true},
		{Breakpoint{Kind: BreakLimit}, Event{Kind: RunEnd}, false},
		{Breakpoint{Kind: BreakKind(99)}, Event{Kind: RunEnd}, false},
	}
	for _, tt := range tests {
		if got := tt.bp.Matches(&tt.e); got != tt.want {
			t.Errorf("%s matches %s %s: %v, want %v", tt.bp, tt.e.Kind, tt.e.Site, got, tt.want)
		}
	}
}

func TestGateBreakpointsPause(t *testing.T) {
	// Each kind pauses a live run through the Tracer at its event only.
	events := map[BreakKind]*Event{
		BreakTool:          {Kind: ToolAttemptStart, Tool: "add", Site: Site{Attempt: 2}},
		BreakNode:          {Kind: NodeEnter, Site: Site{Path: "/body/1"}},
		BreakFailure:       {Kind: ToolAttemptEnd, Error: &ErrorInfo{Type: "TimeoutError"}},
		BreakRetry:         {Kind: RetryBackoffStart},
		BreakCancel:        {Kind: Cancel},
		BreakFailedOutcome: {Kind: BranchOutcome, Outcome: &Outcome{}},
		BreakMismatch:      {Kind: ReplayMismatch},
		BreakLimit:         {Kind: LimitExceeded},
	}
	for kind, target := range events {
		t.Run(kind.String(), func(t *testing.T) {
			g := NewGate()
			bp := Breakpoint{ID: 7, Kind: kind, Path: "/body/1"}
			if kind == BreakTool {
				bp = Breakpoint{ID: 7, Kind: kind, Tool: "add", Attempt: 2}
			}
			g.SetBreakpoints([]Breakpoint{{ID: 1, Kind: BreakTool, Tool: "never"}, bp})
			var hit *Breakpoint
			g.OnPause(func(_ *Event, h *Breakpoint) { hit = h })
			tr := New()
			tr.SetGate(g)
			// Other events pass.
			for _, other := range []*Event{{Kind: NodeExit}, {Kind: RunStart}, {Kind: ToolAttemptStart, Tool: "add", Site: Site{Attempt: 1}}} {
				if err := tr.Emit(context.Background(), other); err != nil || g.Paused() != nil {
					t.Fatal("paused at", other.Kind)
				}
			}
			done := make(chan error)
			go func() { done <- tr.Emit(context.Background(), target) }()
			if e := waitPaused(t, g); e != target {
				t.Fatalf("paused at %v", e.Kind)
			}
			g.Continue()
			<-done
			if hit == nil || hit.ID != 7 {
				t.Errorf("hit %v", hit)
			}
		})
	}
	if n := len(NewGate().Breakpoints()); n != 0 {
		t.Error(n)
	}
}

func TestBreakKindNames(t *testing.T) {
	for k := BreakTool; k <= BreakLimit; k++ {
		if got, ok := ParseBreakKind(k.String()); !ok || got != k {
			t.Errorf("%d: %q", k, k.String())
		}
	}
	if _, ok := ParseBreakKind("nope"); ok {
		t.Error("parsed nope")
	}
	if s := (Breakpoint{ID: 3, Kind: BreakNode, Path: "/body/0", Disabled: true}).String(); s != "#3 node /body/0 (disabled)" {
		t.Error(s)
	}
	if s := BreakKind(42).String(); s != "break(42)" {
		t.Error(s)
	}
}

func TestGateRace(t *testing.T) {
	// Many branches emitting while a user steps, continues and edits
	// breakpoints: no deadlock, no lost event, clean under -race.
	g := NewGate()
	mem := NewMemory()
	tr := New(mem)
	tr.SetGate(g)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := []Kind{NodeEnter, ToolAttemptStart, RetryBackoffStart, NodeExit}[i%4]
				if err := tr.Emit(ctx, &Event{Kind: k, Tool: "t"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var ui sync.WaitGroup
	ui.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch i % 5 {
			case 0:
				g.SetStepping(true)
			case 1:
				g.Step()
			case 2:
				g.SetBreakpoints([]Breakpoint{{Kind: BreakRetry}})
			case 3:
				g.Step()
				_ = g.Paused()
			case 4:
				g.Continue()
			}
		}
	})
	wg.Wait()
	close(stop)
	ui.Wait()
	g.SetBreakpoints(nil)
	g.Continue()
	if mem.Len() != 1600 {
		t.Errorf("%d events", mem.Len())
	}
}

func TestGateDetach(t *testing.T) {
	g := NewGate()
	g.SetStepping(true)
	g.SetBreakpoints([]Breakpoint{{Kind: BreakTool}})
	done := make(chan error, 3)
	for i := range 3 {
		go func() { done <- g.Wait(context.Background(), &Event{Seq: uint64(i + 1), Kind: ToolAttemptStart}) }()
	}
	waitWaiting(t, g, 3)
	g.Detach()
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if g.Paused() != nil || g.armed.Load() {
		t.Error("detached gate still paused or armed")
	}
	g.SetStepping(true)
	g.Pause()
	if err := g.Wait(context.Background(), &Event{Seq: 4, Kind: ToolAttemptStart}); err != nil {
		t.Fatal(err)
	}
}
