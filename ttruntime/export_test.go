package ttruntime

import "context"

// ParseReplyFast exposes the connection's fast reply parser to the external
// tests, which check it against ParseReplyLine.
var ParseReplyFast = parseReply

// WriteStopped reports whether the connection's write-stop flag is up; it must
// be down whenever no request is being written.
func (c *Conn) WriteStopped() bool { return c.writeStop.Load() }

// RawCall is the generic call under the typed ones, for the tests that send
// what no typed call can (unknown commands, fields of the wrong type).
func (c *Conn) RawCall(ctx context.Context, cmd string, req, out any) error {
	return c.call(ctx, cmd, req, out)
}
