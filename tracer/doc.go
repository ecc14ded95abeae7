// Package tracer defines run events and where they go: the Event type,
// sinks (a JSON Lines file, a memory buffer, fan-out, a channel for the
// TUI), the streaming trace reader, a text timeline and the Gate that
// pauses a run at chosen events.
//
// It imports nothing from the rest of the project and knows no engine type.
//
// # Ordering and delivery
//
// The engine emits every step into a Tracer. Emit numbers events with Seq,
// strictly increasing from 1, and writes each event to every sink under one
// lock, so every sink sees all events in Seq order even when parallel
// branches emit from many goroutines. No sink drops an event:
//
//   - JSONLWriter buffers lines and flushes them at every run.end, cancel,
//     limit.exceeded and failure, every 64 KiB, and on Flush and Close;
//     lines are written whole, so after a crash every flushed line reads
//     back and the Reader skips a cut last line with a warning.
//   - Memory keeps every event.
//   - ChannelSink queues without bound, so Write never blocks the engine on
//     a slow consumer, and delivers every event in order until Close, or
//     until its context is cancelled (the consumer is gone).
//   - Multi writes each event to all of its sinks.
//
// A sink's write error never fails the run; Tracer.Err reports the first.
//
// # Pausing
//
// After the sinks, Emit consults the Gate (outside the ordering lock),
// which may block the emitting goroutine until the user steps or
// continues, and never past the cancellation of its context. Events are
// written to the sinks before the run pauses at them, so the debugger
// always shows the event it is paused at.
//
// # Values
//
// Arguments, outputs and other values are decoded JSON (nil, bool,
// json.Number, string, []any, map[string]any). Trace files keep numbers
// exact: a json.Number is written as its text and read back as json.Number,
// never through float64.
package tracer
