package ttruntime

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A request whose caller stopped it before any byte went out is reported as
// not sent (the stream is still in step), and nothing reaches the pipe.
func TestWriteRequestStoppedBeforeSending(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer closeAll(r, w)
	c := &Conn{outw: w}
	line := []byte(`{"id":1,"cmd":"ping"}` + "\n")

	c.writeStop.Store(true)
	err = c.writeRequest(line, time.Now().Add(time.Second))
	require.ErrorIs(t, err, errNotSent)
	require.NoError(t, r.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	n, err := r.Read(make([]byte, 64))
	require.Zero(t, n)
	require.True(t, errors.Is(err, os.ErrDeadlineExceeded), "nothing was written: %v", err)

	c.writeStop.Store(false)
	require.NoError(t, c.writeRequest(line, time.Now().Add(time.Second)))
	require.NoError(t, r.SetReadDeadline(time.Now().Add(time.Second)))
	got := make([]byte, 64)
	n, err = r.Read(got)
	require.NoError(t, err)
	require.Equal(t, line, got[:n])
}
