package shm

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/zyxtt/zyxtt/internal/shmtest"
)

// Helper processes: the test binary re-runs itself with helperEnv set to one
// of these modes, inside the directory the parent set up (ZYX_SHM_DIR).
const (
	helperEnv = "ZYX_SHM_TEST_HELPER"

	helperCreateAndExit = "create-and-exit" // leave a segment behind and die
	helperCreateAndWait = "create-and-wait" // hold a segment until stdin closes
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	// Every test works in a private directory on tmpfs, so that it neither
	// sees nor sweeps the segments of other processes on this machine.
	shmtest.Main(m)
}

// runHelper creates one segment, prints its name and then either exits
// without cleanup or waits for stdin to close before closing it.
func runHelper(mode string) int {
	if mode != helperCreateAndExit && mode != helperCreateAndWait {
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		return 2
	}
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
