package gpumst

// #include "gpumst.h"
import "C"

import (
	"errors"
	"fmt"
)

// Status is the library's outcome code. Every status other than StatusOK is
// also an error value, so the Err* sentinels below are Status values and
// errors.Is(err, gpumst.ErrInvalidGraph) matches any *Error with that status.
type Status int32

// The statuses of the C API (gpumst_status).
const (
	StatusOK                 Status = C.GPUMST_OK
	StatusInvalidArgument    Status = C.GPUMST_INVALID_ARGUMENT
	StatusInvalidGraph       Status = C.GPUMST_INVALID_GRAPH
	StatusBackendUnavailable Status = C.GPUMST_BACKEND_UNAVAILABLE
	StatusOutOfMemory        Status = C.GPUMST_OUT_OF_MEMORY
	StatusDeviceError        Status = C.GPUMST_DEVICE_ERROR
	StatusInternal           Status = C.GPUMST_INTERNAL
)

// Sentinels for errors.Is, one per failure status.
var (
	// ErrInvalidArgument: a length, option or enum value is not acceptable.
	ErrInvalidArgument error = StatusInvalidArgument
	// ErrInvalidGraph: graph data failed validation (vertex id out of range,
	// malformed CSR, NaN weight).
	ErrInvalidGraph error = StatusInvalidGraph
	// ErrBackendUnavailable: the requested tier is missing on this machine or
	// lacks the operation.
	ErrBackendUnavailable error = StatusBackendUnavailable
	// ErrOutOfMemory: host or device memory could not be allocated.
	ErrOutOfMemory error = StatusOutOfMemory
	// ErrDeviceError: a GPU driver or runtime call failed.
	ErrDeviceError error = StatusDeviceError
	// ErrInternal: a bug in gpumst.
	ErrInternal error = StatusInternal
)

// ErrClosed is matched by the error of any call on a closed [Context]; that
// error also matches ErrInvalidArgument, the status the C API gives for a
// missing context.
var ErrClosed = errors.New("gpumst: context is closed")

// String returns the library's name of the status ("ok", "invalid argument",
// ...).
func (s Status) String() string {
	return C.GoString(C.gpumst_status_string(C.gpumst_status(s)))
}

// Error implements error, so that a Status can serve as a sentinel.
func (s Status) Error() string {
	return "gpumst: " + s.String()
}

// Error is a failed call: its status, the operation and the message (from the
// library, or from the checks this package makes before calling it).
type Error struct {
	Status  Status
	Op      string
	Message string
	closed  bool
}

// Error returns "gpumst: OP: STATUS: MESSAGE".
func (e *Error) Error() string {
	s := "gpumst: " + e.Op + ": " + e.Status.String()
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap exposes the status (and ErrClosed for a closed context) to errors.Is
// and errors.As.
func (e *Error) Unwrap() []error {
	if e.closed {
		return []error{e.Status, ErrClosed}
	}
	return []error{e.Status}
}

func errorf(op string, s Status, format string, args ...any) error {
	return &Error{Status: s, Op: op, Message: fmt.Sprintf(format, args...)}
}

func closedError(op string) error {
	return &Error{Status: StatusInvalidArgument, Op: op, Message: "context is closed", closed: true}
}
