// Package demo is the embedded demo of `treelang demo`: a checkout program
// against a flaky toolbox, run four ways so that within a minute the
// debugger shows a retried idempotent tool, a non-idempotent tool that is
// not retried, a parallel branch failing while its siblings are cancelled,
// the same program collecting BranchOutcomes, and a replay that drifts
// from its recording.
//
// Its files are embedded: program.json (the checkout program),
// drifted.json (the same with a changed quantity), toolbox.json (flaky
// scripted tools), policy.json (retries for fetch_price only) and
// recorded.json (a recording of the collect run, which the replay
// scenarios serve). Every run gets a fresh toolbox, so scripts start over.
package demo
