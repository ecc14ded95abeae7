// Package model talks to language models: OpenAI, an engine.ModelTransport
// for OpenAI-compatible chat-completions endpoints over HTTP, and Planner,
// which asks a model for a Treelang program and validates it.
//
// # Transport contract
//
// A request is the chat-completions body as a decoded JSON value (model,
// messages, temperature, ...). Complete returns choices[0].message.content;
// Stream yields the non-empty choices[0].delta.content chunks of a
// server-sent-event stream, in order, and stops at the first error, which
// it yields once with an empty chunk. Stream sends nothing until the
// iteration starts, so its errors surface there, never at call time.
//
// Failures are *engine.Error values of the Python library's model error
// types, so callers and the CLI classify them with errors.Is:
//
//   - no key, HTTP 401 or 403: ModelAuthenticationError (engine.ModelAuthError);
//   - HTTP 429: ModelRateLimitError, with the Retry-After delay in a *StatusError;
//   - any other non-2xx status: ModelTransportError with the status and the
//     server's error message;
//   - the configured Timeout, a client timeout or the caller's deadline
//     (one set without a cause of its own): ModelTimeoutError, which is also
//     a TimeoutError and a ProviderResponseError and wraps
//     context.DeadlineExceeded;
//   - connection refused, DNS failure, a connection lost mid-response:
//     ModelConnectionError ("cannot reach http://127.0.0.1:1234/v1: connection refused");
//   - a body that is not a chat completion: ProviderResponseError.
//
// Cancelling the caller's context is not a model failure: the call returns
// promptly with the context's cause (context.Canceled unless the canceller
// gave another, such as the engine's limit error), the response body is
// closed and the server sees the request cancelled. Nothing is retried by
// the transport.
//
// The API key is sent only in the Authorization header. It never appears in
// an error message: a server message that echoes it has it replaced by
// [REDACTED]. This package logs nothing.
//
// # Planner contract
//
// Plan builds one deterministic request from the question and the tool
// definitions (fixed text, temperature 0, tools in the order given), so a
// recorded ask replays. A reply that is not a JSON object, or whose program
// the caller's Validate rejects, is sent back to the model with the error,
// up to MaxRepairs times. With OnChunk set, replies are streamed and their
// chunks handed over as they arrive. Transport failures, timeouts and cancellation end
// Plan at once and are returned unchanged; they are never retried.
//
// Both types are safe for concurrent use once configured; a Planner's
// fields must not change while Plan runs.
package model
