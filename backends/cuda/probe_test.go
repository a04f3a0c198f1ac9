package cuda

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/backends"
)

// BenchmarkPinnedSources copies 1 GiB host to device from pinned memory of
// several origins, through the driver directly, to find where host-pool
// copies lose bandwidth against a native program. Diagnostic only.
func BenchmarkPinnedSources(b *testing.B) {
	d := gpu(b)
	ctx := context.Background()
	dev, err := d.Pool().Alloc(ctx, gib)
	require.NoError(b, err)
	defer d.Pool().Release(dev)
	dptr, _ := d.pool.devicePtr(dev)
	drv := d.drv
	allocHost, _, herr := drv.lib.symbol("cuMemAllocHost_v2")
	freeHost, _, _ := drv.lib.symbol("cuMemFreeHost")
	type source struct {
		name string
		get  func() ([]byte, func())
	}
	sources := []source{
		{"hostpool", func() ([]byte, func()) {
			host, _ := backends.HostPool()
			id, err := host.Alloc(ctx, gib)
			require.NoError(b, err)
			mem, _ := host.Bytes(id)
			return mem, func() { _ = host.Release(id) }
		}},
		{"mmap-register", func() ([]byte, func()) {
			mem, err := unix.Mmap(-1, 0, gib, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
			require.NoError(b, err)
			for i := range mem {
				mem[i] = byte(i)
			}
			require.NoError(b, d.run("reg", func() error {
				return d.fail("cuMemHostRegister_v2", drv.call(drv.memHostRegister, uintptr(unsafe.Pointer(&mem[0])), gib, hostRegisterPortable))
			}))
			return mem, func() {
				_ = d.run("unreg", func() error { drv.call(drv.memHostUnregister, uintptr(unsafe.Pointer(&mem[0]))); return nil })
				_ = unix.Munmap(mem)
			}
		}},
	}
	if herr == nil {
		sources = append(sources, source{"cuMemAllocHost", func() ([]byte, func()) {
			var p *byte
			require.NoError(b, d.run("allochost", func() error {
				return d.fail("cuMemAllocHost_v2", drv.call(allocHost, uintptr(unsafe.Pointer(&p)), gib))
			}))
			mem := unsafe.Slice(p, gib)
			return mem, func() {
				_ = d.run("freehost", func() error { drv.call(freeHost, uintptr(unsafe.Pointer(p))); return nil })
			}
		}})
	}
	for _, src := range sources {
		mem, done := src.get()
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = byte(i)
		}
		for _, mode := range []string{"backend", "async", "sync"} {
			b.Run(src.name+"/"+mode, func(b *testing.B) {
				copyOnce := func() error {
					switch mode {
					case "backend":
						return d.Pool().Write(ctx, dev, 0, mem)
					case "sync":
						return d.run("x", func() error {
							return d.fail("cuMemcpyHtoD_v2", drv.call(drv.memcpyHtoD, uintptr(dptr), uintptr(unsafe.Pointer(&mem[0])), gib))
						})
					}
					return d.run("x", func() error {
						if r := drv.call(drv.memcpyHtoDAsync, uintptr(dptr), uintptr(unsafe.Pointer(&mem[0])), gib, d.stream); r != cudaSuccess {
							return d.fail("cuMemcpyHtoDAsync_v2", r)
						}
						return d.sync()
					})
				}
				require.NoError(b, copyOnce())
				timeBytes(b, gib, copyOnce)
			})
		}
		done()
	}
}
