package ttruntime

// ParseReplyFast exposes the client's fast reply parser to the external
// tests, which check it against ParseReplyLine.
var ParseReplyFast = parseReply
