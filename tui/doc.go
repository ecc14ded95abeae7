// Package tui is treelang's interactive terminal debugger, built on Bubble
// Tea v2.
//
// It shows one or more runs (live, replayed, or a post-mortem trace): the
// program tree with each node's live status, a virtualized timeline of every
// event received, a detail pane with the selected step's arguments, output,
// error, retry ladder and cancellation causality, a side-by-side view of
// replay mismatches, and a status bar. The user steps, steps back, continues,
// pauses, sets breakpoints, searches and filters, restarts and saves a
// redacted fixture.
//
// Contract:
//
//   - Events of a live run reach the model in the order the tracer emitted
//     them, from one forwarding goroutine per run (a chain of tea.Cmds that
//     read the run's channel sink), stopped by the run's context. No event is
//     dropped: the timeline holds every event received, in order.
//   - The model never blocks in Update and performs no I/O there: previews,
//     saves and AcceptMismatch run in tea.Cmds whose results come back as
//     messages addressed to the pane that asked.
//   - The debugger drives the run's tracer.Gate: stepping forward past the
//     newest event calls Gate.Step, continue calls Gate.Continue, pause calls
//     Gate.Pause. Moving through events already received never touches the
//     gate and costs time proportional to the distance moved, not to the
//     length of the run.
//   - Restart and quit cancel the current run's context and wait until its
//     goroutine has returned before starting a new run or quitting; after Run
//     returns no goroutine of this package is left running.
package tui
