package tt

// Host conversions of buffers declared with the tile layout: the pool
// tilizes on Write and untilizes on Read, and packs or unpacks block-float
// storage, a whole tile row (32 matrix rows) at a time.

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/half"
)

// hostRowBytes is the host size of one tile row: 32 rows of Cols elements.
func (h hostLayout) hostRowBytes() int64 { return TileDim * int64(h.Cols) * int64(h.DType.Size()) }

// devRowBytes is its device size: Cols/32 tiles.
func (h hostLayout) devRowBytes() int64 { return int64(h.Cols) / TileDim * int64(h.tileBytes()) }

// devSize is the device bytes of hostBytes of host data: whole matrices of
// Rows x Cols elements (earlier dims are batches).
func (h hostLayout) devSize(hostBytes int64) (int64, error) {
	if !h.Tile {
		return hostBytes, nil
	}
	matrix := int64(h.Rows) * int64(h.Cols) * int64(h.DType.Size())
	if matrix <= 0 || hostBytes <= 0 || hostBytes%matrix != 0 {
		return 0, fmt.Errorf("%w: %d bytes are not whole %dx%d %s matrices (%d bytes each)", driver.ErrInvalidArgument, hostBytes, h.Rows, h.Cols, h.DType, matrix)
	}
	return hostBytes / h.hostRowBytes() * h.devRowBytes(), nil
}

func (h hostLayout) blockFloat() (BlockFloatFormat, bool) {
	switch h.Format {
	case "Bfp8_b":
		return Bfp8b, true
	case "Bfp4_b":
		return Bfp4b, true
	}
	return 0, false
}

// hostBits reads host element i as f32 bits (f32 or bf16 params).
func (h hostLayout) hostBits(src []byte, i int) uint32 {
	if h.DType == driver.BF16 {
		return uint32(binary.LittleEndian.Uint16(src[2*i:])) << 16
	}
	return binary.LittleEndian.Uint32(src[4*i:])
}

func (h hostLayout) putHost(dst []byte, i int, bits uint32) {
	if h.DType == driver.BF16 {
		binary.LittleEndian.PutUint16(dst[2*i:], half.BF16FromF32(math.Float32frombits(bits)))
		return
	}
	binary.LittleEndian.PutUint32(dst[4*i:], bits)
}

// toDevice converts whole tile rows of host data into device bytes.
func (h hostLayout) toDevice(dev, host []byte) { h.convert(host, dev, true) }

// toHost converts whole tile rows of device bytes into host data.
func (h hostLayout) toHost(host, dev []byte) { h.convert(host, dev, false) }

// convert moves host data and device bytes a tile row (32 matrix rows) at
// a time, into the device's form (tilized, block floats packed) when
// toDevice is set and back otherwise.
func (h hostLayout) convert(host, dev []byte, toDevice bool) {
	hr, dr := int(h.hostRowBytes()), int(h.devRowBytes())
	cols := int(h.Cols)
	bf, isBF := h.blockFloat()
	tb := bf.TileBytes()
	for k := 0; k*hr < len(host); k++ {
		hostRow, devRow := host[k*hr:(k+1)*hr], dev[k*dr:(k+1)*dr]
		if !isBF {
			moveTiles(devRow, hostRow, TileDim, cols, h.DType.Size(), toDevice)
			continue
		}
		for t := range cols / TileDim {
			h.convertBlockFloatTile(hostRow, devRow[t*tb:(t+1)*tb], t, bf, toDevice)
		}
	}
}

// convertBlockFloatTile packs tile t of a host tile row into packed, or
// unpacks packed into it.
func (h hostLayout) convertBlockFloatTile(hostRow, packed []byte, t int, bf BlockFloatFormat, toDevice bool) {
	width, _ := bf.width()
	cols := int(h.Cols)
	var tile [TileValues]uint32
	for r := range TileDim {
		for c := range TileDim {
			i, k := r*cols+t*TileDim+c, faceIndex(r, c)
			if toDevice {
				tile[k] = h.hostBits(hostRow, i)
			} else {
				h.putHost(hostRow, i, tileValueBits(packed, k, width))
			}
		}
	}
	if toDevice {
		packTile(&tile, width, packed)
	}
}
