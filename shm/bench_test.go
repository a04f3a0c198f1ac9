package shm

import "testing"

// BenchmarkCopy64MiB compares a 64 MiB copy into shared memory with plain
// memcpy: into an arena region that is reused (mapped and faulted in once),
// and into a fresh segment per copy (created, mapped, faulted, unmapped and
// unlinked every time, the design the arena replaces). bench/shm.sh prints
// each figure as a ratio against memcpy from the same run.
func BenchmarkCopy64MiB(b *testing.B) {
	const size = 64 << 20
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}

	b.Run("memcpy", func(b *testing.B) {
		dst := make([]byte, size)
		copy(dst, src) // fault the destination in, as the arena's reuse does
		b.SetBytes(size)
		b.ResetTimer()
		for b.Loop() {
			copy(dst, src)
		}
	})

	b.Run("reusedRegion", func(b *testing.B) {
		a, err := NewArena(WithChunk(size))
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		r, err := a.Alloc(size)
		if err != nil {
			b.Fatal(err)
		}
		copy(r.Bytes(), src) // the first use faults the pages in; reuse does not
		b.SetBytes(size)
		b.ResetTimer()
		for b.Loop() {
			copy(r.Bytes(), src)
		}
	})

	b.Run("freshSegment", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			seg, err := Create(NewName(), size)
			if err != nil {
				b.Fatal(err)
			}
			copy(seg.Bytes(), src)
			if err := seg.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
