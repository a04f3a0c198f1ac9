package ttruntime

// The typed requests and replies of protocol v2 (docs/protocol.md) are
// generated from the protocol's one description, protocol/protocol.json,
// into protocol_gen.go (go generate ./ttruntime); this file holds their
// methods and what the schema does not describe. Every field the runtime
// requires is always sent, optional ones are omitted when they hold their
// default, and nothing the runtime does not know is ever sent (an unknown
// field is bad_request there).

//go:generate go run ../internal/protogen/cmd/protogen

import (
	"encoding/base64"
	"unicode/utf8"
)

// MaxLineBytes is the longest protocol line either side accepts.
const MaxLineBytes = 64 << 20

// A request's `after` names at most MaxAfter earlier requests, each at
// most AfterWindow ids before its own (docs/protocol.md, "Pipelining and
// order").
const (
	MaxAfter    = 64
	AfterWindow = 1024
)

// DefaultPageSize is the page size of a buffer whose spec names none: the
// DRAM interleaving unit of a plain alloc.
const DefaultPageSize = 2048

// Total is banks × bank size, or 0 when that overflows.
func (d DRAM) Total() uint64 {
	t := uint64(d.Banks) * d.BankSize
	if d.Banks != 0 && t/uint64(d.Banks) != d.BankSize {
		return 0
	}
	return t
}

// Usable is the L1 bytes kernels may give to circular buffers.
func (l L1) Usable() uint64 {
	if l.UnreservedBase >= l.Size {
		return 0
	}
	return l.Size - l.UnreservedBase
}

// CoreCoord is a logical worker core [row, col].
type CoreCoord [2]uint32

// CoreRange is the inclusive rectangle [r0, c0, r1, c1] of logical cores.
type CoreRange [4]uint32

// Rect is the range of rows r0..r1 and columns c0..c1.
func Rect(r0, c0, r1, c1 uint32) CoreRange { return CoreRange{r0, c0, r1, c1} }

// CoreRangeSet is a list of core ranges that must not overlap. A nil set
// is sent as null, which the runtime reads as a missing field.
type CoreRangeSet []CoreRange

// Cores lists the set's cores range by range, row-major within a range,
// or column-major with colMajor.
func (s CoreRangeSet) Cores(colMajor bool) []CoreCoord {
	var out []CoreCoord
	for _, r := range s {
		if r[0] > r[2] || r[1] > r[3] {
			continue
		}
		// Counted in uint64: a range may end at the largest uint32.
		rows, cols := uint64(r[2]-r[0])+1, uint64(r[3]-r[1])+1
		for i := range rows * cols {
			w, c := i/cols, i%cols
			if colMajor {
				w, c = i%rows, i/rows
			}
			out = append(out, CoreCoord{r[0] + uint32(w), r[1] + uint32(c)})
		}
	}
	return out
}

// Size is the number of cores in the set (ranges counted as given).
func (s CoreRangeSet) Size() uint64 {
	var n uint64
	for _, r := range s {
		if r[0] <= r[2] && r[1] <= r[3] {
			n += uint64(r[2]-r[0]+1) * uint64(r[3]-r[1]+1)
		}
	}
	return n
}

// Contains reports whether core c is in the set.
func (s CoreRangeSet) Contains(c CoreCoord) bool {
	for _, r := range s {
		if c[0] >= r[0] && c[0] <= r[2] && c[1] >= r[1] && c[1] <= r[3] {
			return true
		}
	}
	return false
}

// Normal is the spec with its defaults filled in, so that two specs the
// runtime takes for the same compare equal.
func (s BufferSpec) Normal() BufferSpec {
	if s.PageSize == 0 {
		s.PageSize = DefaultPageSize
	}
	if s.Placement == "" {
		s.Placement = PlacementDRAM
	}
	if s.Layout == "" {
		s.Layout = LayoutInterleaved
	}
	if s.Shard != nil {
		sh := *s.Shard
		if sh.Orientation == "" {
			sh.Orientation = OrientationRowMajor
		}
		sh.Cores = append(CoreRangeSet(nil), sh.Cores...)
		s.Shard = &sh
	}
	return s
}

// Equal reports whether two specs describe the same layout, as the runtime
// compares a run's buffer with its declaration.
func (s BufferSpec) Equal(o BufferSpec) bool {
	a, b := s.Normal(), o.Normal()
	if a.PageSize != b.PageSize || a.Placement != b.Placement || a.Layout != b.Layout || (a.Shard == nil) != (b.Shard == nil) {
		return false
	}
	if a.Shard == nil {
		return true
	}
	x, y := a.Shard, b.Shard
	if x.Shape != y.Shape || x.Tensor != y.Tensor || x.Orientation != y.Orientation || len(x.Cores) != len(y.Cores) {
		return false
	}
	for i := range x.Cores {
		if x.Cores[i] != y.Cores[i] {
			return false
		}
	}
	return true
}

// IsBuffer reports whether the param is a buffer param.
func (p ParamDesc) IsBuffer() bool { return p.Kind != ParamVariable }

// ConstEntry is a const entry of value v.
func ConstEntry(v uint32) ArgEntry { return ArgEntry{Kind: ArgConst, Value: &v} }

// ParamEntry is an entry of kind (param, buffer_addr, buffer_size,
// buffer_pages, page_size, accessor) for param ordinal p.
func ParamEntry(kind string, p uint32) ArgEntry { return ArgEntry{Kind: kind, Param: &p} }

// BankEntry is a bank_id, bank_noc_x or bank_noc_y entry for page page of
// buffer param p.
func BankEntry(kind string, p, page uint32) ArgEntry {
	return ArgEntry{Kind: kind, Param: &p, Page: &page}
}

// CoreNocEntry is a core_noc_x or core_noc_y entry for logical core c.
func CoreNocEntry(kind string, c CoreCoord) ArgEntry { return ArgEntry{Kind: kind, Core: &c} }

// SemaphoreAddrEntry is a semaphore_addr entry for semaphore id.
func SemaphoreAddrEntry(id uint32) ArgEntry { return ArgEntry{Kind: ArgSemaphoreAddr, Semaphore: &id} }

// SetSource stores src as a JSON string when it is valid UTF-8 and as base64
// otherwise, so any byte survives the trip.
func (k *Kernel) SetSource(src string) { k.Source, k.SourceB64 = encodeSource(src) }

// Text returns the kernel's source from whichever field carries it.
func (k *Kernel) Text() (string, error) { return decodeSource(k.Source, k.SourceB64) }

// SetSource stores the file's text (base64 when it is not UTF-8).
func (f *IncludeFile) SetSource(src string) { f.Source, f.SourceB64 = encodeSource(src) }

func encodeSource(src string) (*string, string) {
	if utf8.ValidString(src) {
		return &src, ""
	}
	return nil, base64.StdEncoding.EncodeToString([]byte(src))
}

func decodeSource(s *string, b64 string) (string, error) {
	if b64 != "" {
		b, err := base64.StdEncoding.DecodeString(b64)
		return string(b), err
	}
	if s != nil {
		return *s, nil
	}
	return "", nil
}

// Data formats of circular-buffer indices, with the bytes of a 32×32 tile.
var FormatTileBytes = map[string]uint32{
	"Float32":   4096,
	"Float16_b": 2048,
	"Float16":   2048,
	"Bfp8_b":    1088,
	"Bfp4_b":    576,
	"Int32":     4096,
	"UInt32":    4096,
	"UInt16":    2048,
	"UInt8":     1024,
	"Int8":      1024,
}

// BufferArg is a buffer run argument.
func BufferArg(id uint64) RunArg { return RunArg{Buffer: &id} }

// ValueArg is a variable run argument.
func ValueArg(bits uint64) RunArg { return RunArg{Value: &bits} }
