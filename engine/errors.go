package engine

import (
	"context"
	"errors"
	"fmt"
)

// ErrorType is the name of an error class, spelled as in the Python library
// so outcomes, traces and fixtures read the same in both languages. An
// ErrorType is itself an error, usable as a target of errors.Is: an error
// matches every type it "is a" (ToolNotFoundError is also a ValueError,
// ReplayMismatchError is also a ProviderResponseError).
type ErrorType string

// The error types of the Python library's hierarchy that this engine raises.
const (
	TreelangError         ErrorType = "TreelangError"
	ToolNotFoundError     ErrorType = "ToolNotFoundError"
	ToolExecutionError    ErrorType = "ToolExecutionError"
	ProviderResponseError ErrorType = "ProviderResponseError"
	ModelTransportError   ErrorType = "ModelTransportError"
	ModelAuthError        ErrorType = "ModelAuthenticationError"
	ModelRateLimitError   ErrorType = "ModelRateLimitError"
	ModelTimeoutError     ErrorType = "ModelTimeoutError"
	ModelConnectionError  ErrorType = "ModelConnectionError"
	ReplayMismatchError   ErrorType = "ReplayMismatchError"
	ASTValidationError    ErrorType = "ASTValidationError"
	ASTExecutionError     ErrorType = "ASTExecutionError"
	ExecutionLimitError   ErrorType = "ExecutionLimitError"
	TimeoutError          ErrorType = "TimeoutError"
	ValueError            ErrorType = "ValueError"
	TypeError             ErrorType = "TypeError"
	RuntimeError          ErrorType = "RuntimeError"
	ConnectionError       ErrorType = "ConnectionError"
)

// bases lists each type's direct bases.
var bases = map[ErrorType][]ErrorType{
	ToolNotFoundError:     {TreelangError, ValueError},
	ToolExecutionError:    {TreelangError, RuntimeError},
	ProviderResponseError: {TreelangError, RuntimeError},
	ModelTransportError:   {ProviderResponseError},
	ModelAuthError:        {ModelTransportError},
	ModelRateLimitError:   {ModelTransportError},
	ModelTimeoutError:     {ModelTransportError, TimeoutError},
	ModelConnectionError:  {ModelTransportError, ConnectionError},
	ReplayMismatchError:   {ProviderResponseError},
	ASTValidationError:    {TreelangError, ValueError},
	ASTExecutionError:     {TreelangError, RuntimeError},
	ExecutionLimitError:   {ASTExecutionError},
}

// Error returns the type's name, so an ErrorType can be an errors.Is target.
func (t ErrorType) Error() string { return string(t) }

// IsA reports whether t is other or one of its subclasses.
func (t ErrorType) IsA(other ErrorType) bool {
	if t == other {
		return true
	}
	for _, b := range bases[t] {
		if b.IsA(other) {
			return true
		}
	}
	return false
}

// KnownErrorType reports whether name is an error type this package knows.
func KnownErrorType(name string) bool {
	t := ErrorType(name)
	if _, ok := bases[t]; ok {
		return true
	}
	switch t {
	case TreelangError, TimeoutError, ValueError, TypeError, RuntimeError, ConnectionError:
		return true
	}
	return false
}

// Typed is implemented by errors that carry a Treelang error type, such as
// *Error here and the replay package's mismatch error.
type Typed interface {
	error
	ErrorType() ErrorType
}

// Error is a Treelang error: a type, a message and, for errors raised while
// evaluating, the JSON path of the node where it happened.
type Error struct {
	Type    ErrorType
	Message string
	Path    string // JSON path of the node, when known ("/body/0/params/1")
	Site    string // the node instance that failed, when known ("/body/0[3]")
	Err     error  // the cause, if any
}

// Errorf builds an *Error of type t.
func Errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Message }

// ErrorType returns e's type.
func (e *Error) ErrorType() ErrorType { return e.Type }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches an ErrorType target by the class hierarchy.
func (e *Error) Is(target error) bool {
	if t, ok := target.(ErrorType); ok {
		return e.Type.IsA(t)
	}
	return false
}

// LimitError is an ExecutionLimitError: the named resource went past its
// configured maximum.
type LimitError struct {
	Resource string // nodes, depth, call_depth, tool_calls, wall_clock_seconds
	Limit    string // the configured maximum as Python prints it
}

func (e *LimitError) Error() string {
	return "Execution " + e.Resource + " limit exceeded (" + e.Limit + ")"
}

// ErrorType returns ExecutionLimitError.
func (e *LimitError) ErrorType() ErrorType { return ExecutionLimitError }

// Is matches ExecutionLimitError and its bases.
func (e *LimitError) Is(target error) bool {
	t, ok := target.(ErrorType)
	return ok && ExecutionLimitError.IsA(t)
}

// TypeOf returns the Python class name for err: the type of the outermost
// Typed error in its chain, TimeoutError for a deadline, and RuntimeError
// for anything else. Cancellation has no class and returns "".
func TypeOf(err error) ErrorType {
	var typed Typed
	if errors.As(err, &typed) {
		return typed.ErrorType()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return TimeoutError
	}
	if errors.Is(err, context.Canceled) {
		return ""
	}
	return RuntimeError
}

// IsCancellation reports whether err is a cancellation, which is never
// retried, never collected into an outcome and always propagates.
func IsCancellation(err error) bool {
	var typed Typed
	if errors.As(err, &typed) {
		return false
	}
	return errors.Is(err, context.Canceled)
}

// SiteOf returns the failing node instance carried by err, or its path.
func SiteOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		if e.Site != "" {
			return e.Site
		}
		return e.Path
	}
	return ""
}

// PathOf returns the JSON path carried by err, if any.
func PathOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Path
	}
	return ""
}
