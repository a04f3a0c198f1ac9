//go:build amd64 && !windows

package dl

import "unsafe"

// runtimeCgocall is the runtime's cgo call (the one purego makes): it
// leaves the Go scheduler as a system call does, switches to the thread's
// system stack and calls fn there with arg as its one C argument. fn and
// arg stay where they are for the call: a goroutine's stack does not move
// while it is in a system call.
//
//go:linkname runtimeCgocall runtime.cgocall
//go:noescape
func runtimeCgocall(fn uintptr, arg unsafe.Pointer) int32

// callTrampolineABI0 is the address of callTrampoline (call_amd64.s),
// which unpacks a frame into the C calling convention's registers and
// stack and calls its function.
var callTrampolineABI0 uintptr

// invoke calls f.fn with f's arguments. Against purego.SyscallN it skips
// copying 32 integer and 8 floating-point argument slots per call and
// the pool that holds them: a frame of 12 slots on the caller's stack is
// all it passes.
func invoke(f *frame) uintptr {
	runtimeCgocall(callTrampolineABI0, unsafe.Pointer(f))
	return f.r
}
