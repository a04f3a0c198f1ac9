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

func checkTileShape(n, dstLen, rows, cols int) error {
	if rows <= 0 || cols <= 0 || rows%TileDim != 0 || cols%TileDim != 0 {
		return fmt.Errorf("tt: tile layout needs rows and cols that are positive multiples of %d, got %dx%d", TileDim, rows, cols)
	}
	if rows > (1<<62)/cols || n != rows*cols || dstLen != rows*cols {
		return fmt.Errorf("tt: tile layout of %dx%d needs %d elements in and out, got %d and %d", rows, cols, rows*cols, n, dstLen)
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

func tilize[T any](dst, src []T, rows, cols int) error {
	if err := checkTileShape(len(src), len(dst), rows, cols); err != nil {
		return err
	}
	for r := range rows {
		row := src[r*cols : (r+1)*cols]
		for c0 := 0; c0 < cols; c0 += FaceDim { // a face row is contiguous
			copy(dst[tiledIndex(r, c0, cols):][:FaceDim], row[c0:c0+FaceDim])
		}
	}
	return nil
}

func untilize[T any](dst, src []T, rows, cols int) error {
	if err := checkTileShape(len(src), len(dst), rows, cols); err != nil {
		return err
	}
	for r := range rows {
		row := dst[r*cols : (r+1)*cols]
		for c0 := 0; c0 < cols; c0 += FaceDim {
			copy(row[c0:c0+FaceDim], src[tiledIndex(r, c0, cols):][:FaceDim])
		}
	}
	return nil
}

// TilizeBF16 reorders a row-major rows×cols bf16 matrix (raw bits) into
// tiles. rows and cols must be multiples of 32; dst and src must not overlap.
func TilizeBF16(dst, src []uint16, rows, cols int) error { return tilize(dst, src, rows, cols) }

// UntilizeBF16 is the inverse of TilizeBF16.
func UntilizeBF16(dst, src []uint16, rows, cols int) error { return untilize(dst, src, rows, cols) }

// TilizeF32 reorders a row-major rows×cols f32 matrix into tiles.
func TilizeF32(dst, src []float32, rows, cols int) error { return tilize(dst, src, rows, cols) }

// UntilizeF32 is the inverse of TilizeF32.
func UntilizeF32(dst, src []float32, rows, cols int) error { return untilize(dst, src, rows, cols) }

// TilizeBytes reorders a row-major rows×cols matrix of elemSize-byte
// elements (1, 2 or 4: the integer formats, bf16, f32) into tiles, as
// TilizeF32 does for floats. dst and src must not overlap.
func TilizeBytes(dst, src []byte, rows, cols, elemSize int) error {
	return byTileRows(dst, src, rows, cols, elemSize, tilizeRowBytes)
}

// UntilizeBytes is the inverse of TilizeBytes.
func UntilizeBytes(dst, src []byte, rows, cols, elemSize int) error {
	return byTileRows(dst, src, rows, cols, elemSize, untilizeRowBytes)
}

// byTileRows checks the shape and applies row to each tile row (32 rows)
// of src and dst.
func byTileRows(dst, src []byte, rows, cols, elemSize int, row func(dst, src []byte, cols, elemSize int)) error {
	if err := checkByteShape(len(dst), len(src), rows, cols, elemSize); err != nil {
		return err
	}
	n := TileDim * cols * elemSize
	for tr := 0; tr < rows/TileDim; tr++ {
		row(dst[tr*n:(tr+1)*n], src[tr*n:(tr+1)*n], cols, elemSize)
	}
	return nil
}

func checkByteShape(dstLen, srcLen, rows, cols, es int) error {
	if es != 1 && es != 2 && es != 4 {
		return fmt.Errorf("tt: tile layout of %d-byte elements (want 1, 2 or 4)", es)
	}
	if rows <= 0 || cols <= 0 || rows%TileDim != 0 || cols%TileDim != 0 {
		return fmt.Errorf("tt: tile layout needs rows and cols that are positive multiples of %d, got %dx%d", TileDim, rows, cols)
	}
	if rows > (1<<40)/cols || srcLen != rows*cols*es || dstLen != srcLen {
		return fmt.Errorf("tt: tile layout of %dx%d needs %d bytes in and out, got %d and %d", rows, cols, rows*cols*es, srcLen, dstLen)
	}
	return nil
}

// faceRowAt is the byte offset, within one tile row of a cols-wide matrix,
// of the 16-element face row that holds element (r, c0) (r < 32, c0 a
// multiple of 16).
func faceRowAt(r, c0, es int) int {
	tile := c0 / TileDim
	face := (r/FaceDim)*2 + (c0%TileDim)/FaceDim
	return (tile*TileLen + face*FaceDim*FaceDim + (r%FaceDim)*FaceDim) * es
}

// tilizeRowBytes tilizes one tile row: 32 matrix rows of cols elements.
func tilizeRowBytes(dst, src []byte, cols, es int) {
	w := FaceDim * es
	for r := range TileDim {
		row := src[r*cols*es : (r+1)*cols*es]
		for c0 := 0; c0 < cols; c0 += FaceDim {
			o := faceRowAt(r, c0, es)
			copy(dst[o:o+w], row[c0*es:c0*es+w])
		}
	}
}

func untilizeRowBytes(dst, src []byte, cols, es int) {
	w := FaceDim * es
	for r := range TileDim {
		row := dst[r*cols*es : (r+1)*cols*es]
		for c0 := 0; c0 < cols; c0 += FaceDim {
			o := faceRowAt(r, c0, es)
			copy(row[c0*es:c0*es+w], src[o:o+w])
		}
	}
}
