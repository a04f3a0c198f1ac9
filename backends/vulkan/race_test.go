//go:build race

package vulkan

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// purego.SyscallN's pooled argument blocks are sometimes allocated afresh.
const raceEnabled = true
