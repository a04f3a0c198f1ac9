package ttruntime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zyxtt/zyxtt/internal/core"
)

// Backend is the backend name that errors of this package carry.
const Backend = "tt"

// The error codes (CodeBadRequest, ...) are generated from protocol/protocol.json
// into protocol_gen.go.

// ErrProtocol marks a runtime that broke the protocol (a reply with the wrong
// id, a garbage or oversized line). The client is unusable afterwards and
// every error it returns also wraps core.ErrDeviceLost.
var ErrProtocol = errors.New("tt-runtime protocol violation")

// ErrVersion marks a runtime that speaks another protocol version.
var ErrVersion = errors.New("tt-runtime protocol version mismatch")

// RemoteError is an error reply: the runtime's code and message. It unwraps
// to the sentinel the code amounts to (internal/core's, which backends
// re-exports), so errors.Is(err, backends.ErrUnknownBuffer) works on a
// reply with code unknown_buffer.
type RemoteError struct {
	Code    string
	Message string
}

func (e *RemoteError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Unwrap maps the code to a sentinel, or nil when none fits.
func (e *RemoteError) Unwrap() error {
	switch e.Code {
	case CodeUnknownBuffer, CodeUnknownProgram:
		return core.ErrUnknownBuffer
	case CodeOutOfMemory:
		return core.ErrOutOfMemory
	case CodeInvalidArgument, CodeBadRequest, CodeLineTooLong, CodeShmError:
		return core.ErrInvalidArgument
	case CodeCompileError:
		return core.ErrCompile
	case CodeUnsupported, CodeUnknownCommand:
		return core.ErrUnsupported
	case CodeVersionMismatch:
		return ErrVersion
	case CodeDependencyFailed:
		return core.ErrDependency
	}
	return nil
}

// remoteErr wraps an error reply in the typed error (backends.Error).
func remoteErr(cmd string, body *ErrorBody) error {
	re := &RemoteError{Code: body.Code, Message: body.Message}
	if re.Code == "" {
		re.Code = CodeInternal
	}
	return &core.Error{Backend: Backend, Op: cmd, Err: re}
}

// lostErr is the error every call returns once the runtime is gone.
func lostErr(cmd, why, stderrTail string) error {
	return &core.Error{
		Backend: Backend,
		Op:      cmd,
		Err:     fmt.Errorf("%w: %s", core.ErrDeviceLost, why),
		Native:  stderrNote(stderrTail),
	}
}

func stderrNote(tail string) string {
	tail = strings.TrimSpace(tail)
	if tail == "" {
		return ""
	}
	return "runtime stderr (last lines):\n" + tail
}
