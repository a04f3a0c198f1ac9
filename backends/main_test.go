package backends

import (
	"fmt"
	"os"
	"testing"

	"github.com/zyxtt/zyxtt/shm"
)

func TestMain(m *testing.M) {
	// The host pool's segments go to a private tmpfs directory, so these
	// tests neither see nor leave segments among other processes' ones.
	base := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "zyxtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "backends test: temp dir:", err)
		os.Exit(2)
	}
	shm.Dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
