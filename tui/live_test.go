package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/treelang/treelang/tracer"
)

func liveModel(t *testing.T, startPaused bool, specs ...RunSpec) *driver {
	t.Helper()
	if len(specs) == 0 {
		specs = []RunSpec{liveSpec()}
	}
	m := NewModel(Options{Runs: specs, Width: 100, Height: 30, StartPaused: startPaused})
	return newDriver(t, m)
}

func histLen(m Model) int { return m.sess().hist.len() }

func TestLiveStepPastNewestReleasesGate(t *testing.T) {
	d := liveModel(t, true)
	d.until("paused at run.start", func(m Model) bool { return histLen(m) == 1 && m.sess().state == statePaused })
	d.keys("n")
	d.until("the second event", func(m Model) bool { return histLen(m) == 2 && selectedSeq(m) == 2 })
	d.keys("n")
	d.until("the third event", func(m Model) bool { return histLen(m) == 3 && selectedSeq(m) == 3 })
	// Stepping back through what happened does not touch the gate.
	d.keys("p", "p")
	if selectedSeq(d.m) != 1 || histLen(d.m) != 3 {
		t.Fatalf("step back: seq %d, %d events", selectedSeq(d.m), histLen(d.m))
	}
	if p := d.m.sess().live.gate.Paused(); p == nil || p.Seq != 3 {
		t.Fatalf("the run stays paused at seq 3, gate says %v", p)
	}
	d.keys("n", "n")
	if selectedSeq(d.m) != 3 || histLen(d.m) != 3 {
		t.Fatalf("stepping forward through history: seq %d, %d events", selectedSeq(d.m), histLen(d.m))
	}
	d.keys("n")
	d.until("the fourth event", func(m Model) bool { return histLen(m) == 4 && selectedSeq(m) == 4 })
	if st := nodeStatusOf(d.m, "/body/1"); st.status != statusRunning {
		t.Fatalf("search entered: %v", st.status)
	}
	d.keys("c")
	d.until("the run ends", func(m Model) bool { return m.sess().state == stateDone })
	if histLen(d.m) != 19 || selectedSeq(d.m) != 19 {
		t.Fatalf("after continue: %d events, cursor %d", histLen(d.m), selectedSeq(d.m))
	}
	if d.m.sess().result != "done" {
		t.Fatalf("result %v", d.m.sess().result)
	}
}

func TestLiveBreakpointHitBlocksRun(t *testing.T) {
	d := liveModel(t, true)
	d.until("paused at run.start", func(m Model) bool { return histLen(m) == 1 })
	// Set a breakpoint on the search tool from the dialog? Simpler: run to
	// the next cancellation, which the gate must stop at.
	d.keys("x")
	d.until("stopped at the cancel", func(m Model) bool {
		return m.sess().state == statePaused && selectedSeq(m) == 16
	})
	if n := histLen(d.m); n != 16 {
		t.Fatalf("the run must be blocked at the cancel: %d events", n)
	}
	if !strings.Contains(plain(d.m), "paused") || !strings.Contains(plain(d.m), "stopped at") {
		t.Fatalf("status should show the pause:\n%s", plain(d.m))
	}
	if d.m.sess().runTo != nil {
		t.Fatal("the run-to breakpoint is removed once hit")
	}
	// A user breakpoint on a tool, set while paused, is honoured by the
	// live gate too: restart and continue to it.
	d.keys("home", "n", "n", "n", "n", "b") // seq 5: search
	if got := d.m.sess().live.gate.Breakpoints(); len(got) != 1 || got[0].Tool != "search" {
		t.Fatalf("gate breakpoints %v", got)
	}
	d.keys("r")
	d.until("restarted and paused", func(m Model) bool { return m.sess().gen == 2 && histLen(m) == 1 })
	d.keys("c")
	d.until("stopped at search", func(m Model) bool { return m.sess().state == statePaused && selectedSeq(m) == 5 })
	if histLen(d.m) != 5 {
		t.Fatalf("blocked at seq 5, got %d events", histLen(d.m))
	}
}

func TestLivePauseAndQuitCancelsRun(t *testing.T) {
	release := make(chan struct{})
	spec := liveSpec()
	// A run that emits one event, then waits for the test or ctx.
	spec.Run = func(ctx context.Context, tr *tracer.Tracer) (any, error) {
		if err := tr.Emit(ctx, &tracer.Event{Kind: tracer.RunStart}); err != nil {
			return nil, err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		return nil, tr.Emit(ctx, &tracer.Event{Kind: tracer.RunEnd})
	}
	d := liveModel(t, false, spec)
	d.until("running", func(m Model) bool { return histLen(m) == 1 && m.sess().state == stateRunning })
	if !d.m.keys.Pause.Enabled() {
		t.Fatal("pause applies to a running run")
	}
	d.keys("space")
	close(release)
	d.until("paused at run.end", func(m Model) bool { return m.sess().state == statePaused && histLen(m) == 2 })
	d.keys("q")
	d.until("quit after the run returned", func(m Model) bool { return m.quitting && !m.sess().isLive() })
	if d.m.sess().state != stateCancelled {
		t.Fatalf("state after quit: %v", d.m.sess().state)
	}
}

func TestLiveMismatchAcceptContinues(t *testing.T) {
	var mu sync.Mutex
	var accepted []*tracer.Event
	spec := RunSpec{
		Name: "replay drift", Mode: "replay", Outline: mismatchOutline(),
		Run: scriptedRun(mismatchScript),
		AcceptMismatch: func(e *tracer.Event) error {
			mu.Lock()
			defer mu.Unlock()
			accepted = append(accepted, e)
			return nil
		},
	}
	d := liveModel(t, false, spec)
	d.send(tea.WindowSizeMsg{Width: 140, Height: 40})
	d.until("stopped at the mismatch", func(m Model) bool {
		return m.sess().state == statePaused && selectedSeq(m) == 6
	})
	view := plain(d.m)
	for _, want := range []string{"Replay mismatch", "drift: changed", "fixture entry 2", "expected (fixture)", "actual call",
		`!     "url": "https://example.test/b"`, `!     "url": "https://example.test/B"`, "/arguments/url"} {
		if !strings.Contains(view, want) {
			t.Fatalf("mismatch view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, `!       "lang"`) || strings.Contains(view, `! "lang"`) {
		t.Fatalf("equal fields must not be marked:\n%s", view)
	}
	if !d.m.keys.Accept.Enabled() {
		t.Fatal("accept applies at a mismatch")
	}
	d.keys("a")
	d.until("the replay goes on to the end", func(m Model) bool { return m.sess().state == stateDone })
	mu.Lock()
	defer mu.Unlock()
	if len(accepted) != 1 || accepted[0].Kind != tracer.ReplayMismatch || accepted[0].Seq != 6 {
		t.Fatalf("AcceptMismatch got %v", accepted)
	}
}

func TestLiveStepsFasterThanTheRunAreQueued(t *testing.T) {
	d := liveModel(t, true)
	d.until("paused at run.start", func(m Model) bool { return histLen(m) == 1 })
	d.keys("n", "n", "n", "n")
	d.until("four steps taken", func(m Model) bool {
		return histLen(m) == 5 && selectedSeq(m) == 5 && m.sess().state == statePaused
	})
	if p := d.m.sess().live.gate.Paused(); p == nil || p.Seq != 5 {
		t.Fatalf("the gate should hold seq 5, holds %v", p)
	}
}

func TestSaveOnlyWhenTheRunIsDone(t *testing.T) {
	spec := liveSpec()
	spec.Saver = &fakeSaver{}
	d := liveModel(t, true, spec)
	d.until("paused at run.start", func(m Model) bool { return histLen(m) == 1 })
	if d.m.keys.Save.Enabled() {
		t.Fatal("saving applies only once the run is done")
	}
	d.keys("s")
	if d.m.dialog != dialogNone {
		t.Fatal("s must not open the dialog while the run is live")
	}
	d.keys("c")
	d.until("done", func(m Model) bool { return m.sess().state == stateDone })
	if !d.m.keys.Save.Enabled() || !strings.Contains(plain(d.m), "save fixture") {
		t.Fatalf("save should be offered once done:\n%s", plain(d.m))
	}
}

func TestLiveFloodKeepsEveryEventInOrder(t *testing.T) {
	const n = 20000
	spec := liveSpec()
	spec.Run = func(ctx context.Context, tr *tracer.Tracer) (any, error) {
		for i := range n {
			e := &tracer.Event{Kind: tracer.ToolAttemptStart, Tool: "fetch",
				Site: tracer.Site{Path: "/body/0", Iter: []int{i}, Attempt: 1}}
			if err := tr.Emit(ctx, e); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	d := liveModel(t, false, spec)
	d.until("all events in", func(m Model) bool { return m.sess().state == stateDone })
	h := d.m.sess().hist
	if h.len() != n {
		t.Fatalf("received %d of %d events", h.len(), n)
	}
	for i, e := range h.events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	if selectedSeq(d.m) != n {
		t.Fatalf("the cursor follows the newest event: %d", selectedSeq(d.m))
	}
}

func TestSwitchingRunsStartsEachAndQuitStopsAll(t *testing.T) {
	second := liveSpec()
	second.Name = "collect"
	d := liveModel(t, true, liveSpec(), second)
	d.until("first run paused", func(m Model) bool { return histLen(m) == 1 })
	if d.m.sessions[1].started {
		t.Fatal("the second run starts only when shown")
	}
	d.keys("]")
	d.until("second run paused", func(m Model) bool { return m.cur == 1 && histLen(m) == 1 })
	d.keys("n")
	d.until("second run stepped", func(m Model) bool { return histLen(m) == 2 })
	if d.m.sessions[0].hist.len() != 1 {
		t.Fatal("stepping the shown run leaves the other alone")
	}
	d.keys("q")
	d.until("both runs returned", func(m Model) bool {
		return m.quitting && !m.sessions[0].isLive() && !m.sessions[1].isLive()
	})
}

func TestPausedEventKeepsCursorWhileBranchesQueueBehindIt(t *testing.T) {
	release := make(chan struct{})
	spec := RunSpec{Name: "parallel", Mode: "replay", Outline: mismatchOutline()}
	spec.Run = func(ctx context.Context, tr *tracer.Tracer) (any, error) {
		errs := make(chan error, 2)
		go func() { // branch 0 drifts: the mismatch breakpoint stops it
			errs <- tr.Emit(ctx, &tracer.Event{Kind: tracer.ReplayMismatch, Site: site("/body/0", 1), Tool: "fetch",
				Message: "drift", Data: map[string]any{"drift": "changed"}})
		}()
		go func() { // branch 1 goes on meanwhile; its events wait at the gate
			select {
			case <-release:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
			for _, p := range []string{"/body/1", "/body/1"} {
				if err := tr.Emit(ctx, &tracer.Event{Kind: tracer.NodeEnter, Site: site(p, 0), Node: "tool_call"}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
		return nil, errors.Join(<-errs, <-errs)
	}
	d := liveModel(t, false, spec)
	d.until("paused at the mismatch", func(m Model) bool { return m.sess().state == statePaused && selectedSeq(m) == 1 })
	close(release)
	d.until("the other branch's first event arrived", func(m Model) bool { return histLen(m) >= 2 })
	if selectedSeq(d.m) != 1 || !strings.Contains(plain(d.m), "Replay mismatch") {
		t.Fatalf("the cursor must stay on the paused mismatch:\n%s", plain(d.m))
	}
	d.m.sess().note = "" // past the breakpoint note, the position shows
	if !strings.Contains(plain(d.m), "paused at event 1;") || !strings.Contains(plain(d.m), "wait behind it") {
		t.Fatalf("the status should say events wait behind the pause:\n%s", plain(d.m))
	}
	// Stepping releases the mismatch; the next held event becomes the pause.
	d.keys("n")
	d.until("at the next event", func(m Model) bool { return selectedSeq(m) == 2 && m.sess().state == statePaused })
	if p := d.m.sess().live.gate.Paused(); p == nil || p.Seq != 2 {
		t.Fatalf("the gate should now hold seq 2, holds %v", p)
	}
	d.keys("c")
	d.until("done", func(m Model) bool { return m.sess().state == stateDone })
}
