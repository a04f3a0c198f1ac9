package cuda

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cBlock is memory outside the Go heap (an anonymous mapping) for what the
// driver reads through pointers: kernel parameter arrays, GEMM scalars,
// C strings. The Go collector never moves or frees it.
type cBlock struct {
	mem []byte
}

func newCBlock(n int) (*cBlock, error) {
	if n <= 0 {
		n = 1
	}
	size := (n + 4095) &^ 4095
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("cuda: map %d bytes of parameter memory: %w", size, err)
	}
	return &cBlock{mem: mem}, nil
}

// addr is the address of byte off of the block.
func (b *cBlock) addr(off int) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b.mem))) + uintptr(off)
}

func (b *cBlock) free() error {
	if b == nil || b.mem == nil {
		return nil
	}
	err := unix.Munmap(b.mem)
	b.mem = nil
	return err
}

// cStrings writes NUL-terminated copies of strs into a fresh block followed
// by an array of pointers to them. It returns the block, the address of the
// first string and the address of the pointer array.
func cStrings(strs ...string) (*cBlock, []uintptr, uintptr, error) {
	size := 8 * len(strs)
	for _, s := range strs {
		size += len(s) + 1
	}
	b, err := newCBlock(size)
	if err != nil {
		return nil, nil, 0, err
	}
	ptrs := make([]uintptr, len(strs))
	off := 8 * len(strs)
	for i, s := range strs {
		copy(b.mem[off:], s)
		b.mem[off+len(s)] = 0
		ptrs[i] = b.addr(off)
		binary.LittleEndian.PutUint64(b.mem[8*i:], uint64(ptrs[i]))
		off += len(s) + 1
	}
	return b, ptrs, b.addr(0), nil
}

// paramSlot is the size of one kernel argument's value slot. Every argument
// a program passes (a device pointer, a scalar of at most 8 bytes) fits.
const paramSlot = 8

// paramBlockSize is the bytes a kernel with n params needs: the pointer
// array cuLaunchKernel reads, then one value slot per param.
func paramBlockSize(n int) int { return n * (8 + paramSlot) }

// packParams lays out a cuLaunchKernel parameter array in mem, which lies at
// address base: entry i of the pointer array (at the start) points at value
// slot i, which holds values[i] (little endian, at most paramSlot bytes).
func packParams(mem []byte, base uintptr, values [][]byte) error {
	n := len(values)
	if len(mem) < paramBlockSize(n) {
		return fmt.Errorf("cuda: parameter block of %d bytes is too small for %d params", len(mem), n)
	}
	for i, v := range values {
		if len(v) > paramSlot {
			return fmt.Errorf("cuda: param %d is %d bytes; at most %d fit", i, len(v), paramSlot)
		}
		slot := 8*n + paramSlot*i
		clear(mem[slot : slot+paramSlot])
		copy(mem[slot:], v)
		binary.LittleEndian.PutUint64(mem[8*i:], uint64(base)+uint64(slot))
	}
	return nil
}
