// Package replay records runs into fixtures and replays them offline.
//
// Vocabulary from go-vcr: a Recorder wraps a live provider (mode record),
// a ToolReplay serves a fixture (mode replay only), and a mismatch is a
// *MismatchError carrying the entry, the expected and actual call, the
// kind of drift and a field-by-field diff.
//
// Deterministic replay of concurrent runs. The recorder numbers every
// attempt start and completion, backoff timer firing and the run deadline
// firing in one global sequence. A ToolReplay built from such a fixture
// matches calls by site (node path, iteration indices, attempt), not by
// arrival order, and serves each outcome only once every earlier
// completion has happened, and every attempt that had started before it
// has started, in this replay. An attempt the recording saw cancelled
// blocks until the engine cancels it again. Backoff sleeps and the
// deadline run on a virtual clock (ToolReplay.Clock), so a run that slept
// 30 s replays in milliseconds.
//
// The clock is also the engine's Scheduler: during a replay one engine
// goroutine runs at a time and the replay decides who runs next (see
// sched.go), so a concurrent run replays the same whole event sequence
// every time, not just the same result. When nothing can proceed, the
// completion that never came is reported as a ReplayMismatchError at once
// instead of a hang. Without Clock() as the engine's clock, calls are
// still matched and released in order, with a stall timeout.
//
// Fixtures without sites (such as the Python CLI's) replay with the Python
// semantics: entries are consumed in order through a cursor; a call that
// matches a later entry waits for its turn, so calls that ran concurrently
// may arrive in any order among themselves, and is reported as reordered
// if its turn never comes.
package replay
