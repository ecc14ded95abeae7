// Package replay records runs into fixtures and replays them offline.
//
// Vocabulary from go-vcr: a Recorder wraps a live provider (mode record),
// a ToolReplay serves a fixture (mode replay only), and a mismatch is a
// *MismatchError carrying the entry, the expected and actual call, the
// kind of drift and a field-by-field diff.
//
// Deterministic replay of concurrent runs. The recorder numbers every
// completion (a tool attempt ending, a backoff timer firing, the run
// deadline firing) in one global sequence. A ToolReplay built from such a
// fixture matches calls by site (node path, iteration indices, attempt),
// not by arrival order, and serves each outcome only once every earlier
// completion has happened in this replay. An attempt the recording saw
// cancelled blocks until the engine cancels it again. Backoff sleeps and
// the deadline run on a virtual clock (ToolReplay.Clock), so a run that
// slept 30 s replays in milliseconds. When nothing progresses for the
// stall timeout (and the debugger is not paused), the completion that
// never came is reported as a ReplayMismatchError instead of a hang.
//
// Fixtures without sites (such as the Python CLI's) replay with the Python
// semantics: entries are consumed in order through a cursor; a call that
// matches a later entry waits for its turn, so calls that ran concurrently
// may arrive in any order among themselves, and is reported as reordered
// if its turn never comes.
package replay
