package cuda

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// Pinned copies run at full speed only from memory on the GPU's own NUMA
// node: DMA across the socket link is much slower. Host-pool pages are
// placed where the thread that first touched them ran, which for a Go
// program is any node. So before a segment is pinned, its pages are moved
// to the GPU's node, and the segment's policy places later pages there too.

const (
	mpolPreferred = 1      // MPOL_PREFERRED
	mpolMFMove    = 1 << 1 // MPOL_MF_MOVE
)

// numaNodes is how many NUMA nodes the host has (1 when unknown).
func numaNodes() int {
	m, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	return max(len(m), 1)
}

// gpuNUMANode is the NUMA node of the PCI device busID ("0000:3B:00.0"),
// or -1 when the host does not say.
func gpuNUMANode(busID string) int {
	if busID == "" {
		return -1
	}
	data, err := os.ReadFile(filepath.Join("/sys/bus/pci/devices", strings.ToLower(busID), "numa_node"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 0 || n >= 64 {
		return -1
	}
	return n
}

// placeOnNode moves the pages of [base, base+size) to node and makes node
// the preferred node for pages faulted later. Failure only costs speed.
func placeOnNode(base unsafe.Pointer, size int64, node int) {
	mask := uint64(1) << node
	_, _, errno := unix.Syscall6(unix.SYS_MBIND, uintptr(base), uintptr(size), mpolPreferred,
		uintptr(unsafe.Pointer(&mask)), 65, mpolMFMove)
	if errno != 0 {
		driver.Debug(driver.DebugDevice, "cuda: host-pool segment not moved to the GPU's NUMA node", "node", node, "err", errno.Error())
	}
}
