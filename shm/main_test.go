package shm

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

// Helper processes: the test binary re-runs itself with helperEnv set to one
// of these modes, inside the directory named by dirEnv.
const (
	helperEnv = "ZYX_SHM_TEST_HELPER"
	dirEnv    = "ZYX_SHM_TEST_DIR"

	helperCreateAndExit = "create-and-exit" // leave a segment behind and die
	helperCreateAndWait = "create-and-wait" // hold a segment until stdin closes
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	// Every test works in a private directory on tmpfs, so that it neither
	// sees nor sweeps the segments of other processes on this machine.
	base := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "zyxtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "shm test: temp dir:", err)
		os.Exit(2)
	}
	Dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// runHelper creates one segment, prints its name and then either exits
// without cleanup or waits for stdin to close before closing it.
func runHelper(mode string) int {
	if mode != helperCreateAndExit && mode != helperCreateAndWait {
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		return 2
	}
	Dir = os.Getenv(dirEnv)
	seg, err := Create(NewName(), 4096)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	fmt.Println(seg.Name())
	if mode == helperCreateAndExit {
		return 0 // the segment is deliberately left behind
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := seg.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}
