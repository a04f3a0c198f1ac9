package config

import (
	"fmt"
	"unicode/utf8"
)

// Error is one fault in the config file: where it is and what is wrong, in
// the file's own terms (key paths and JSON values, never Go types).
type Error struct {
	// File is the config file's path; empty for bytes not read from a file.
	File string
	// Line and Column locate the fault (1-based, the column counts
	// characters); 0 when the fault has no one place.
	Line, Column int
	// Field is the key path ("select.budget_s", "c.flags[1]"); empty for
	// faults of the file as a whole (JSON syntax).
	Field string
	// Msg says what is wrong and, where it can, what is wanted.
	Msg string
}

// Error is "FILE:LINE:COLUMN: FIELD: MSG", with "config" for FILE when the
// config was not read from a file.
func (e *Error) Error() string {
	where := e.File
	if where == "" {
		where = "config"
	}
	if e.Line > 0 {
		where += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		return where + ": " + e.Field + ": " + e.Msg
	}
	return where + ": " + e.Msg
}

// errorAt is an *Error at byte offset off of data.
func errorAt(data []byte, off int, field, format string, args ...any) *Error {
	line, col := position(data, off)
	return &Error{Line: line, Column: col, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// position is the 1-based line and column (in characters) of byte offset
// off in data.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line, lineStart := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line, lineStart = line+1, i+1
		}
	}
	return line, utf8.RuneCount(data[lineStart:off]) + 1
}
