package bundle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"codeberg.org/sbinet/npyio"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/internal/half"
)

// GenKind is how a generator fills a buffer.
type GenKind uint8

// The generators.
const (
	GenRandom GenKind = iota // uniform in [Lo, Hi)
	GenConst                 // every element Value
	GenIota                  // 0, 1, 2, …
)

// Gen is a parsed input generator spec (random, random:LO:HI, const:V, iota).
type Gen struct {
	Kind   GenKind
	Lo, Hi float64
	Value  float64
	// Ranged is set when random was given explicit bounds.
	Ranged bool
}

// ParseGen reads a generator spec. File specs (FILE.npy, FILE.bin) are not
// generators: see IsFileSpec.
func ParseGen(spec string) (Gen, error) {
	switch {
	case spec == "random":
		return Gen{Kind: GenRandom}, nil
	case spec == "iota":
		return Gen{Kind: GenIota}, nil
	case strings.HasPrefix(spec, "const:"):
		v, err := strconv.ParseFloat(spec[len("const:"):], 64)
		if err != nil || math.IsNaN(v) {
			return Gen{}, fmt.Errorf("%q: const:V needs a number", spec)
		}
		return Gen{Kind: GenConst, Value: v}, nil
	case strings.HasPrefix(spec, "random:"):
		lo, hi, ok := strings.Cut(spec[len("random:"):], ":")
		l, err1 := strconv.ParseFloat(lo, 64)
		h, err2 := strconv.ParseFloat(hi, 64)
		if !ok || err1 != nil || err2 != nil || !(l < h) || math.IsInf(l, 0) || math.IsInf(h, 0) {
			return Gen{}, fmt.Errorf("%q: random:LO:HI needs two finite numbers with LO < HI", spec)
		}
		return Gen{Kind: GenRandom, Lo: l, Hi: h, Ranged: true}, nil
	}
	return Gen{}, fmt.Errorf("%q: want random, random:LO:HI, const:V, iota, FILE.npy or FILE.bin", spec)
}

// IsFileSpec reports whether an input spec names a file.
func IsFileSpec(spec string) bool { return isFileSpec(spec) }

func isFileSpec(spec string) bool {
	ext := strings.ToLower(filepath.Ext(spec))
	return (ext == ".npy" || ext == ".bin") && !strings.Contains(spec, ":")
}

// Fill writes generated elements of dtype dt into dst (len(dst)/size
// elements). seed makes random data repeatable.
func Fill(dst []byte, dt backends.DType, g Gen, seed uint64) error {
	size := dt.Size()
	if size == 0 {
		return fmt.Errorf("%w: bad dtype", backends.ErrInvalidArgument)
	}
	n := len(dst) / size
	lo, hi := g.Lo, g.Hi
	if !g.Ranged {
		lo, hi = -1, 1
		if !dt.IsFloat() {
			lo, hi = 0, 16
		}
		if dt == backends.Bool {
			hi = 2
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x7a79782d7474))
	for i := range n {
		var v float64
		switch g.Kind {
		case GenConst:
			v = g.Value
		case GenIota:
			v = float64(i)
		default:
			if dt.IsFloat() {
				v = lo + (hi-lo)*rng.Float64()
			} else {
				l, h := math.Ceil(lo), math.Ceil(hi)
				span := h - l
				if span < 1 {
					span = 1
				}
				v = l + math.Floor(rng.Float64()*span)
			}
		}
		if err := encode(dst[i*size:(i+1)*size], dt, v); err != nil {
			return err
		}
	}
	return nil
}

// encode stores v as one element of dtype dt, rounding floats to nearest
// and saturating integers at their range.
func encode(dst []byte, dt backends.DType, v float64) error {
	le := binary.LittleEndian
	sat := func(lo, hi float64) float64 {
		v = math.Round(v)
		return math.Max(lo, math.Min(hi, v))
	}
	switch dt {
	case backends.F64:
		le.PutUint64(dst, math.Float64bits(v))
	case backends.F32:
		le.PutUint32(dst, math.Float32bits(float32(v)))
	case backends.F16:
		le.PutUint16(dst, half.FromF32(float32(v)))
	case backends.BF16:
		le.PutUint16(dst, half.BF16FromF32(float32(v)))
	case backends.F8E4M3:
		dst[0] = half.F8E4M3FromFloat(v)
	case backends.F8E5M2:
		dst[0] = half.F8E5M2FromFloat(v)
	case backends.I8:
		dst[0] = byte(int8(sat(math.MinInt8, math.MaxInt8)))
	case backends.I16:
		le.PutUint16(dst, uint16(int16(sat(math.MinInt16, math.MaxInt16))))
	case backends.I32:
		le.PutUint32(dst, uint32(int32(sat(math.MinInt32, math.MaxInt32))))
	case backends.I64:
		le.PutUint64(dst, uint64(int64(sat(-(1<<63), (1<<63)-1024))))
	case backends.U8:
		dst[0] = byte(sat(0, math.MaxUint8))
	case backends.U16:
		le.PutUint16(dst, uint16(sat(0, math.MaxUint16)))
	case backends.U32:
		le.PutUint32(dst, uint32(sat(0, math.MaxUint32)))
	case backends.U64:
		le.PutUint64(dst, uint64(sat(0, (1<<64)-2048)))
	case backends.Bool:
		if v != 0 {
			dst[0] = 1
		} else {
			dst[0] = 0
		}
	default:
		return fmt.Errorf("%w: cannot generate %s data", backends.ErrUnsupported, dt)
	}
	return nil
}

// ToFloat64 decodes a buffer of dtype dt.
func ToFloat64(dt backends.DType, src []byte) ([]float64, error) {
	size := dt.Size()
	if size == 0 || len(src)%size != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of %s elements", backends.ErrInvalidArgument, len(src), dt)
	}
	le := binary.LittleEndian
	out := make([]float64, len(src)/size)
	for i := range out {
		e := src[i*size:]
		switch dt {
		case backends.F64:
			out[i] = math.Float64frombits(le.Uint64(e))
		case backends.F32:
			out[i] = float64(math.Float32frombits(le.Uint32(e)))
		case backends.F16:
			out[i] = float64(half.ToF32(le.Uint16(e)))
		case backends.BF16:
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(e)) << 16))
		case backends.F8E4M3:
			out[i] = half.F8E4M3ToFloat(e[0])
		case backends.F8E5M2:
			out[i] = half.F8E5M2ToFloat(e[0])
		case backends.I8:
			out[i] = float64(int8(e[0]))
		case backends.I16:
			out[i] = float64(int16(le.Uint16(e)))
		case backends.I32:
			out[i] = float64(int32(le.Uint32(e)))
		case backends.I64:
			out[i] = float64(int64(le.Uint64(e)))
		case backends.U8, backends.Bool:
			out[i] = float64(e[0])
		case backends.U16:
			out[i] = float64(le.Uint16(e))
		case backends.U32:
			out[i] = float64(le.Uint32(e))
		case backends.U64:
			out[i] = float64(le.Uint64(e))
		default:
			return nil, fmt.Errorf("%w: cannot decode %s data", backends.ErrUnsupported, dt)
		}
	}
	return out, nil
}

// npyDescr is the NumPy type string for each dtype. bf16 and the f8 types,
// which NumPy lacks, travel as their raw bits (u2, u1).
var npyDescr = map[backends.DType]string{
	backends.F16: "<f2", backends.F32: "<f4", backends.F64: "<f8",
	backends.BF16: "<u2", backends.F8E4M3: "|u1", backends.F8E5M2: "|u1",
	backends.I8: "|i1", backends.I16: "<i2", backends.I32: "<i4", backends.I64: "<i8",
	backends.U8: "|u1", backends.U16: "<u2", backends.U32: "<u4", backends.U64: "<u8",
	backends.Bool: "|b1",
}

// ReadInput fills dst, a buffer of the param's dtype and shape, from a .npy
// or .bin file, a regular file. A .npy file's dtype must be the param's, its
// shape the param's (or 1-D with the same element count), its order C (row
// major) when it has more than one dimension, and its data exactly len(dst)
// bytes, to the end of the file; a .bin file's size must be exactly
// len(dst).
func ReadInput(path string, dt backends.DType, shape []uint64, dst []byte) error {
	f, err := openRegular(path, backends.ErrInvalidArgument)
	if err != nil {
		return err
	}
	defer f.Close()
	if strings.EqualFold(filepath.Ext(path), ".bin") {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() != int64(len(dst)) {
			return fmt.Errorf("%w: %s has %d bytes, the param needs %d (%d × %s)", backends.ErrInvalidArgument,
				path, st.Size(), len(dst), len(dst)/max(dt.Size(), 1), dt)
		}
		if _, err := io.ReadFull(f, dst); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	hdr, err := readNpyHeader(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	want := npyDescr[dt]
	got := strings.Trim(hdr.Descr.Type, `'" `)
	if got == "<u1" || got == "<i1" || got == "<b1" {
		got = "|" + got[1:]
	}
	if got != want {
		return fmt.Errorf("%w: %s holds %s elements, the param is %s (%s)", backends.ErrInvalidArgument, path, got, dt, want)
	}
	n := int64(1)
	for _, s := range hdr.Descr.Shape {
		if s < 0 || (s > 0 && n > math.MaxInt64/int64(s)) {
			return fmt.Errorf("%w: %s: bad shape %v", backends.ErrInvalidArgument, path, hdr.Descr.Shape)
		}
		n *= int64(s)
	}
	wantN := Elems(shape)
	sameShape := len(hdr.Descr.Shape) == len(shape)
	for i := 0; sameShape && i < len(shape); i++ {
		sameShape = uint64(hdr.Descr.Shape[i]) == shape[i]
	}
	if n != wantN || (!sameShape && len(hdr.Descr.Shape) != 1) {
		return fmt.Errorf("%w: %s has shape %v, the param needs %v", backends.ErrInvalidArgument, path, hdr.Descr.Shape, shape)
	}
	if hdr.Descr.Fortran && len(hdr.Descr.Shape) > 1 {
		return fmt.Errorf("%w: %s is in Fortran (column-major) order; save it in C order (numpy.ascontiguousarray)", backends.ErrUnsupported, path)
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	array := fmt.Sprintf("%v %s, %d bytes", hdr.Descr.Shape, got, len(dst))
	switch data := st.Size() - start; {
	case data > int64(len(dst)):
		extra := strconv.FormatInt(data-int64(len(dst)), 10) + " bytes follow"
		if data == int64(len(dst))+1 {
			extra = "1 byte follows"
		}
		return fmt.Errorf("%w: %s: %s the array (%s); a .npy file holds one array and nothing after it",
			backends.ErrInvalidArgument, path, extra, array)
	case data < int64(len(dst)):
		return fmt.Errorf("%w: %s is cut short: it ends %d bytes into the array (%s)", backends.ErrInvalidArgument, path, data, array)
	}
	if _, err := io.ReadFull(f, dst); err != nil {
		return fmt.Errorf("%s: data: %w", path, err)
	}
	return nil
}

// maxNpyHeader bounds a .npy header's length: real headers are a few
// hundred bytes.
const maxNpyHeader = 1 << 20

// readNpyHeader reads a .npy header through npyio, turning a parser panic on
// a malformed header into an error. It first checks the header length the
// file claims against the file's size and a small cap, so a tiny file that
// claims a 4 GiB header is refused before anything is allocated.
func readNpyHeader(f *os.File, size int64) (hdr npyio.Header, err error) {
	var pre [12]byte
	if _, err := io.ReadFull(f, pre[:]); err != nil {
		return hdr, fmt.Errorf("%w: not a .npy file: too short", backends.ErrInvalidArgument)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return hdr, fmt.Errorf("%w: not a .npy file (bad magic)", backends.ErrInvalidArgument)
	}
	var hlen, prefix int64
	switch pre[6] {
	case 1:
		hlen, prefix = int64(binary.LittleEndian.Uint16(pre[8:])), 10
	case 2, 3:
		hlen, prefix = int64(binary.LittleEndian.Uint32(pre[8:])), 12
	default:
		return hdr, fmt.Errorf("%w: .npy version %d.%d is not one this reader knows (1, 2 or 3)", backends.ErrUnsupported, pre[6], pre[7])
	}
	if hlen > maxNpyHeader || hlen > size-prefix {
		return hdr, fmt.Errorf("%w: .npy header claims %d bytes in a file of %d", backends.ErrInvalidArgument, hlen, size)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return hdr, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: malformed .npy header", backends.ErrInvalidArgument)
		}
	}()
	rd, err := npyio.NewReader(f)
	if err != nil {
		return hdr, fmt.Errorf("%w: not a .npy file: %v", backends.ErrInvalidArgument, err)
	}
	return rd.Header, nil
}

// WriteOutput writes src, a buffer of dtype dt and the given shape, to a
// .npy or .bin file: StageOutput, then Commit.
func WriteOutput(path string, dt backends.DType, shape []uint64, src []byte) error {
	st, err := StageOutput(path, dt, shape, src)
	if err != nil {
		return err
	}
	return st.Commit()
}

// StagedOutput is an output written to a temp file beside its path, not yet
// in place: Commit renames it over the path, Discard removes it. A run with
// several outputs stages them all and commits only when every one is
// written and the run has succeeded, so a failed run replaces no file.
type StagedOutput struct {
	path, tmp string
}

// StageOutput writes src to a temp file beside path. The file gets the mode
// of the file it will replace, or 0666 less the umask for a new one.
func StageOutput(path string, dt backends.DType, shape []uint64, src []byte) (_ *StagedOutput, err error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".npy" && ext != ".bin" {
		return nil, fmt.Errorf("%w: output %s: want a .npy or .bin file", backends.ErrInvalidArgument, path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var tmp *os.File
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.tmp%d", base, rand.Uint32()))
		// 0666 under O_CREAT is narrowed by the umask, as any new file is.
		tmp, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if old, err := os.Stat(path); err == nil && old.Mode().IsRegular() {
		if err := tmp.Chmod(old.Mode().Perm()); err != nil {
			return nil, fmt.Errorf("output %s: %w", path, err)
		}
	}
	if ext == ".npy" {
		if _, err := tmp.Write(npyHeader(dt, shape)); err != nil {
			return nil, fmt.Errorf("output %s: %w", path, err)
		}
	}
	if _, err := tmp.Write(src); err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	return &StagedOutput{path: path, tmp: tmp.Name()}, nil
}

// Commit puts the output in place.
func (s *StagedOutput) Commit() error {
	if err := os.Rename(s.tmp, s.path); err != nil {
		_ = os.Remove(s.tmp)
		return fmt.Errorf("output %s: %w", s.path, err)
	}
	return nil
}

// Discard removes the temp file; the path is untouched.
func (s *StagedOutput) Discard() { _ = os.Remove(s.tmp) }

// npyHeader is a version 1.0 .npy header, padded so data starts 64-aligned.
func npyHeader(dt backends.DType, shape []uint64) []byte {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = strconv.FormatUint(s, 10)
	}
	shp := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		shp += ","
	}
	shp += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", npyDescr[dt], shp)
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	dict += strings.Repeat(" ", pad) + "\n"
	out := make([]byte, 0, 10+len(dict))
	out = append(out, "\x93NUMPY\x01\x00"...)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(dict)))
	return append(out, dict...)
}
