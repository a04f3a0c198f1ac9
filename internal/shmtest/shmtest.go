// Package shmtest gives a test binary a private directory on tmpfs for its
// shared memory segments, so that its tests neither see nor leave segments
// among other processes' ones.
package shmtest

import (
	"fmt"
	"os"
	"testing"
)

// envDir is shm.EnvDir; this package cannot import shm, whose own tests use
// it.
const envDir = "ZYX_SHM_DIR"

// Main runs the tests of m with ZYX_SHM_DIR set to a fresh directory under
// /dev/shm (or the system temp directory where there is no /dev/shm), removes
// it afterwards and exits with the tests' status. A test binary re-run as a
// helper process inherits the directory through the environment.
func Main(m *testing.M) {
	if os.Getenv(envDir) != "" {
		os.Exit(m.Run()) // a helper process, or a caller that chose a directory
	}
	base := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "zyxtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "shmtest: temp dir:", err)
		os.Exit(2)
	}
	if err := os.Setenv(envDir, dir); err != nil {
		fmt.Fprintln(os.Stderr, "shmtest:", err)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// Dir is the directory Main set up (the value of ZYX_SHM_DIR).
func Dir() string { return os.Getenv(envDir) }
