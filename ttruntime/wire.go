package ttruntime

// Wire framing: a request is one JSON object on one line of stdin, a reply
// one JSON object on one line of stdout (docs/protocol.md). This file
// encodes and writes requests, reads lines and parses replies; none of it
// allocates for a ping.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/internal/core"
)

// directWriteMax is the longest request written before reading. A pipe
// always takes this much (PIPE_BUF) at once; longer requests are written by
// a helper goroutine while the caller drains stdout, so a runtime that logs
// to stdout while we are still writing cannot deadlock the pair.
const directWriteMax = 4096

// keptBufMax is the largest request or line buffer kept for reuse; a
// larger one (a long compile request, a long reply) is dropped after use so
// that the client does not pin it.
const keptBufMax = 1 << 20

// encodeBody renders a request's fields as a JSON object.
func encodeBody(cmd string, req any) ([]byte, error) {
	b, err := json.Marshal(req)
	if err == nil && (len(b) < 2 || b[0] != '{') {
		err = fmt.Errorf("request for %s is not an object", cmd)
	}
	if err != nil {
		return nil, &core.Error{Backend: Backend, Op: cmd, Err: fmt.Errorf("%w: encode request: %w", core.ErrInvalidArgument, err)}
	}
	return b, nil
}

// appendRequest renders {"id":id,"cmd":cmd,<fields of body>} and a newline.
func appendRequest(dst []byte, id uint64, cmd string, body []byte) []byte {
	return appendRequestAfter(dst, id, cmd, nil, body)
}

// appendRequestAfter is appendRequest with an "after" list of request ids
// (none when empty).
func appendRequestAfter(dst []byte, id uint64, cmd string, after []uint64, body []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, `,"cmd":`...)
	dst = appendJSONString(dst, cmd)
	if len(after) > 0 {
		dst = append(dst, `,"after":[`...)
		for i, a := range after {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, a, 10)
		}
		dst = append(dst, ']')
	}
	if len(body) > 2 {
		dst = append(dst, ',')
		dst = append(dst, body[1:len(body)-1]...)
	}
	return append(dst, '}', '\n')
}

// appendJSONString quotes s for JSON; command names are plain words, so
// the encoder is needed only for anything else.
func appendJSONString(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || b == '"' || b == '\\' {
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	q, err := json.Marshal(s)
	if err != nil { // not reachable for a string; keep the stream valid
		return append(dst, `""`...)
	}
	return append(dst, q...)
}

// errNotSent is writeRequest's answer when the caller stopped it before
// any byte of the request went out.
var errNotSent = errors.New("request not sent")

// writeRequest writes one whole request line by the deadline. A deadline
// armed for an earlier call that fires first is re-armed exactly and the
// write goes on where it stopped.
func (c *Conn) writeRequest(line []byte, deadline time.Time) error {
	if err := c.armWrite(deadline); err != nil {
		return err
	}
	whole := len(line)
	for {
		// The stop is checked after every arming: a stop that came
		// before it is seen here, and one that comes after it has moved
		// the deadline into the past, so no write outlives a stop.
		if c.writeStop.Load() {
			if len(line) == whole {
				return errNotSent
			}
			return os.ErrDeadlineExceeded
		}
		n, err := c.outw.Write(line)
		line = line[n:]
		switch {
		case err == nil || !errors.Is(err, os.ErrDeadlineExceeded):
			return err
		case c.writeStop.Load():
			continue // the stop woke the write: answered above
		case !time.Now().Before(deadline) || c.armedWrite.Equal(deadline):
			return err
		}
		if err := c.rearmWrite(deadline); err != nil {
			return err
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next stdout line without its newline; it is valid
// until the next read. A read cut short (deadline, error) keeps what it got
// in c.partial, so the next read goes on with the same line. No line longer
// than MaxLineBytes is ever held.
func (c *Conn) readLine() ([]byte, error) {
	for {
		frag, err := c.out.ReadSlice('\n')
		if err == nil && len(c.partial) == 0 {
			return frag[:len(frag)-1], nil // the common case: no copy
		}
		if len(c.partial)+len(frag) > MaxLineBytes+1 {
			c.partial = nil
			return nil, errLineTooLong
		}
		c.partial = append(c.partial, frag...)
		switch {
		case err == nil:
			line := c.partial[:len(c.partial)-1]
			if cap(c.partial) > keptBufMax {
				c.partial = nil // do not pin a huge buffer
			} else {
				c.partial = c.partial[:0]
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return nil, err
		}
	}
}

// ParseReplyLine reads the header of one stdout line. A line that is not a
// JSON object (a log line that leaked onto stdout) is not a reply and not an
// error; an object that does not decode as a reply is ErrProtocol.
func ParseReplyLine(line []byte) (h ReplyHeader, isReply bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return h, false, nil
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return ReplyHeader{}, false, fmt.Errorf("%w: undecodable reply line %q: %w", ErrProtocol, clip(line, 120), err)
	}
	if h.OK == nil {
		return ReplyHeader{}, false, fmt.Errorf("%w: reply line %q has no ok field", ErrProtocol, clip(line, 120))
	}
	if !*h.OK && h.Error == nil {
		h.Error = &ErrorBody{Code: CodeInternal, Message: "error reply without an error object"}
	}
	return h, true, nil
}

// parseReply is ParseReplyLine with a fast path for the commonest reply,
// {"id":N,"ok":true} exactly, which it reads without the decoder.
func parseReply(line []byte) (ReplyHeader, bool, error) {
	const head, tail = `{"id":`, `,"ok":true}`
	if len(line) > len(head)+len(tail) && string(line[:len(head)]) == head && string(line[len(line)-len(tail):]) == tail {
		digits := line[len(head) : len(line)-len(tail)]
		if id, ok := parseID(digits); ok {
			return ReplyHeader{ID: id, OK: &replyOK}, true, nil
		}
	}
	return ParseReplyLine(line)
}

var replyOK = true

// parseID reads a plain decimal uint64 (no sign, no leading zero unless 0).
func parseID(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var v uint64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d-'0'))/10 {
			return 0, false // overflow
		}
		v = v*10 + uint64(d-'0')
	}
	return v, true
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
