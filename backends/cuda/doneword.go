package cuda

import (
	"sync/atomic"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// doneWord is a 32-bit word of pinned host memory that the GPU writes
// after the work of a launch that runs alone (runAloneLocked), through
// cuStreamWriteValue32. The submitter then waits with plain loads of its
// own memory, as the driver's own synchronisation spins, where polling a
// CUDA event costs a call into the driver (and a cgo crossing) per poll.
// It is made at the first alone launch and lives until Close; a driver or
// GPU without stream memory operations leaves it unmade, and alone
// launches poll a CUDA event instead. Under the submission lock.
type doneWord struct {
	tried bool
	mem   *cBlock
	word  *uint32
	addr  uint64 // the word's device address
	seq   uint32 // the value the newest write asked for
}

// ready makes the word on its first call, the context current and
// stream s idle, and reports whether it is usable. Making it ends with a
// probe: one write, waited for, must arrive.
func (w *doneWord) ready(d *Device, s uintptr) bool {
	if w.tried {
		return w.word != nil
	}
	w.tried = true
	drv := d.drv
	if drv.streamWriteValue32 == 0 || drv.memHostGetDevicePointer == 0 {
		return false
	}
	mem, err := newCBlock(4)
	if err != nil {
		return false
	}
	word := (*uint32)(unsafe.Pointer(&mem.mem[0]))
	var addr uint64
	step, r := "cuMemHostRegister_v2", drv.call(drv.memHostRegister, mem.addr(0), uintptr(len(mem.mem)), hostRegisterPortable|hostRegisterDeviceMap)
	if r == cudaSuccess {
		for _, try := range []struct {
			step string
			call func() cuResult
		}{
			{"cuMemHostGetDevicePointer_v2", func() cuResult {
				return drv.call(drv.memHostGetDevicePointer, uintptr(unsafe.Pointer(&addr)), mem.addr(0), 0)
			}},
			{"cuStreamWriteValue32", func() cuResult { return drv.cuStreamWriteValue32(s, addr, 1) }},
			{"cuStreamSynchronize", func() cuResult { return drv.cuStreamSynchronize(s) }},
		} {
			if step, r = try.step, try.call(); r != cudaSuccess {
				break
			}
		}
		if r == cudaSuccess && atomic.LoadUint32(word) != 1 {
			step, r = "the probe's write", cudaErrorNotReady
		}
		if r != cudaSuccess {
			drv.call(drv.memHostUnregister, mem.addr(0))
		}
	}
	if r != cudaSuccess {
		driver.Debug(driver.DebugDevice, "cuda: launches that run alone poll an event: no completion word",
			"device", d.name, "step", step, "err", drv.name(r))
		_ = mem.free()
		return false
	}
	w.mem, w.word, w.addr, w.seq = mem, word, addr, 1
	return true
}

// write puts on stream s the write of the next value, and returns it.
func (w *doneWord) write(d *Device, s uintptr) (uint32, cuResult) {
	w.seq++
	return w.seq, d.drv.cuStreamWriteValue32(s, w.addr, w.seq)
}

// arrived reports whether the GPU has written v.
func (w *doneWord) arrived(v uint32) bool {
	return atomic.LoadUint32(w.word) == v
}

// close unregisters and frees the word (healthy: the context can still
// take calls). The device's streams are idle.
func (w *doneWord) close(d *Device, healthy bool) {
	if w.mem == nil {
		return
	}
	if healthy {
		d.drv.call(d.drv.memHostUnregister, w.mem.addr(0))
	}
	_ = w.mem.free()
	w.mem, w.word = nil, nil
}
