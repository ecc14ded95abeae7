// Package tracer defines run events and where they go: the Event type,
// sinks (a JSON Lines file, a memory buffer, fan-out), the streaming trace
// reader and the Gate that pauses a run at chosen events.
//
// It imports nothing from the rest of the project and knows no engine type.
package tracer
