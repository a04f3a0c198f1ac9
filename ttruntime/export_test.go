package ttruntime

// ParseReplyFast exposes the client's fast reply parser to the external
// tests, which check it against ParseReplyLine.
var ParseReplyFast = parseReply

// WriteStopped reports whether the client's write-stop flag is up; it must
// be down whenever no request is being written.
func (c *Client) WriteStopped() bool { return c.writeStop.Load() }
