package tt

import "fmt"

// Tensix tiles: a 32×32 tile is stored as four 16×16 faces (top-left,
// top-right, bottom-left, bottom-right), each face row-major, and a matrix
// as its tiles in row-major tile order.
const (
	TileDim = 32
	FaceDim = 16
	TileLen = TileDim * TileDim
)

// checkTileShape checks that dst and src hold a rows×cols matrix of
// es-value elements (es bytes of a []byte: 1, 2 or 4); unit names what
// the slices count in the error.
func checkTileShape(dstLen, srcLen, rows, cols, es int, unit string) error {
	if es != 1 && es != 2 && es != 4 {
		return fmt.Errorf("tt: tile layout of %d-byte elements (want 1, 2 or 4)", es)
	}
	if rows <= 0 || cols <= 0 || rows%TileDim != 0 || cols%TileDim != 0 {
		return fmt.Errorf("tt: tile layout needs rows and cols that are positive multiples of %d, got %dx%d", TileDim, rows, cols)
	}
	if rows > (1<<40)/cols || srcLen != rows*cols*es || dstLen != srcLen {
		return fmt.Errorf("tt: tile layout of %dx%d needs %d %s in and out, got %d and %d", rows, cols, rows*cols*es, unit, srcLen, dstLen)
	}
	return nil
}

// tiledIndex is where element (r, c) of a rows×cols matrix lands.
func tiledIndex(r, c, cols int) int {
	tilesPerRow := cols / TileDim
	tile := (r/TileDim)*tilesPerRow + c/TileDim
	tr, tc := r%TileDim, c%TileDim
	face := (tr/FaceDim)*2 + tc/FaceDim
	return tile*TileLen + face*FaceDim*FaceDim + (tr%FaceDim)*FaceDim + tc%FaceDim
}

// retile checks the shape and tilizes src into dst, or untilizes it.
func retile[T any](dst, src []T, rows, cols, es int, tilize bool) error {
	unit := "elements"
	if _, ok := any(dst).([]byte); ok {
		unit = "bytes"
	}
	if err := checkTileShape(len(dst), len(src), rows, cols, es, unit); err != nil {
		return err
	}
	if tilize {
		moveTiles(dst, src, rows, cols, es, true)
	} else {
		moveTiles(src, dst, rows, cols, es, false)
	}
	return nil
}

// moveTiles copies a row-major rows×cols matrix into tile order (tilize)
// or out of it, a face row at a time: its 16 elements stand together in
// both orders. An element is es values of T (es bytes of a []byte).
func moveTiles[T any](tiled, rowMajor []T, rows, cols, es int, tilize bool) {
	w := FaceDim * es
	for r := range rows {
		row := rowMajor[r*cols*es : (r+1)*cols*es]
		for c0 := 0; c0 < cols; c0 += FaceDim {
			o := tiledIndex(r, c0, cols) * es
			face, part := tiled[o:o+w], row[c0*es:c0*es+w]
			if tilize {
				copy(face, part)
			} else {
				copy(part, face)
			}
		}
	}
}

// TilizeBF16 reorders a row-major rows×cols bf16 matrix (raw bits) into
// tiles. rows and cols must be multiples of 32; dst and src must not overlap.
func TilizeBF16(dst, src []uint16, rows, cols int) error {
	return retile(dst, src, rows, cols, 1, true)
}

// UntilizeBF16 is the inverse of TilizeBF16.
func UntilizeBF16(dst, src []uint16, rows, cols int) error {
	return retile(dst, src, rows, cols, 1, false)
}

// TilizeF32 reorders a row-major rows×cols f32 matrix into tiles.
func TilizeF32(dst, src []float32, rows, cols int) error {
	return retile(dst, src, rows, cols, 1, true)
}

// UntilizeF32 is the inverse of TilizeF32.
func UntilizeF32(dst, src []float32, rows, cols int) error {
	return retile(dst, src, rows, cols, 1, false)
}

// TilizeBytes reorders a row-major rows×cols matrix of elemSize-byte
// elements (1, 2 or 4: the integer formats, bf16, f32) into tiles, as
// TilizeF32 does for floats. dst and src must not overlap.
func TilizeBytes(dst, src []byte, rows, cols, elemSize int) error {
	return retile(dst, src, rows, cols, elemSize, true)
}

// UntilizeBytes is the inverse of TilizeBytes.
func UntilizeBytes(dst, src []byte, rows, cols, elemSize int) error {
	return retile(dst, src, rows, cols, elemSize, false)
}
