package vulkan

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The SPIR-V facts a compute pipeline needs are read here, before the
// driver sees the module: drivers are not required to survive malformed
// SPIR-V (lavapipe crashes on a module cut short), so a module whose
// structure is broken never reaches them. This is a structural check —
// header, instruction framing, entry points that name defined functions,
// functions that end, blocks that end in a terminator — not a full
// validator: a well-formed module with wrong semantics still reaches the
// driver.

// terminators end a block.
var terminators = map[uint32]bool{
	249: true, 250: true, 251: true, 252: true, 253: true, 254: true, 255: true, // branch … unreachable
	4416: true, // OpTerminateInvocation
}

const (
	spirvMagic = 0x07230203

	opEntryPoint    = 15
	opExecutionMode = 16
	opFunction      = 54
	opFunctionEnd   = 56
	opDecorate      = 71
	opLabel         = 248

	execModelGLCompute = 5
	execModeLocalSize  = 17

	decorationBinding       = 33
	decorationDescriptorSet = 34
)

// errSPIRV marks a module that is not well-formed SPIR-V.
var errSPIRV = errors.New("invalid SPIR-V")

// spirvModule is what parseSPIRV learned about a module.
type spirvModule struct {
	Version uint32
	// Entries maps each GLCompute entry point's name to its local size;
	// a zero size means the module sets it another way (LocalSizeId or a
	// specialization constant).
	Entries map[string][3]uint32
	// Bindings maps a variable id to its [set, binding] decorations.
	Bindings map[uint32][2]uint32
}

// parseSPIRV checks the module's header and instruction stream and
// collects entry points, local sizes and descriptor bindings.
func parseSPIRV(code []byte) (*spirvModule, error) {
	if len(code) < 20 || len(code)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes (want a multiple of 4, at least 20)", errSPIRV, len(code))
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	if words[0] != spirvMagic {
		return nil, fmt.Errorf("%w: magic number %#08x (want %#08x, little endian)", errSPIRV, words[0], spirvMagic)
	}
	version := words[1]
	if version&0xff0000ff != 0 || version < 0x00010000 || version > 0x00010600 {
		return nil, fmt.Errorf("%w: version word %#08x", errSPIRV, version)
	}
	if words[3] == 0 {
		return nil, fmt.Errorf("%w: id bound is zero", errSPIRV)
	}
	m := &spirvModule{Version: version, Entries: map[string][3]uint32{}, Bindings: map[uint32][2]uint32{}}
	entryIDs := map[uint32]string{}
	local := map[uint32][3]uint32{}
	bound := words[3]
	functions := map[uint32]bool{}
	inFunction, inBlock := false, false
	for i := 5; i < len(words); {
		wc := int(words[i] >> 16)
		op := words[i] & 0xffff
		if wc == 0 || i+wc > len(words) {
			return nil, fmt.Errorf("%w: instruction at word %d (opcode %d) has word count %d, %d words left", errSPIRV, i, op, wc, len(words)-i)
		}
		ins := words[i+1 : i+wc]
		if terminators[op] {
			if !inBlock {
				return nil, fmt.Errorf("%w: terminator (opcode %d) at word %d outside a block", errSPIRV, op, i)
			}
			inBlock = false
		}
		switch op {
		case opFunction:
			if inFunction || len(ins) < 4 {
				return nil, fmt.Errorf("%w: OpFunction at word %d inside a function or too short", errSPIRV, i)
			}
			inFunction = true
			functions[ins[1]] = true
		case opFunctionEnd:
			if !inFunction || inBlock {
				return nil, fmt.Errorf("%w: OpFunctionEnd at word %d ends no function or an open block", errSPIRV, i)
			}
			inFunction = false
		case opLabel:
			if !inFunction || inBlock {
				return nil, fmt.Errorf("%w: OpLabel at word %d outside a function or inside an open block", errSPIRV, i)
			}
			inBlock = true
		case opEntryPoint:
			if len(ins) < 3 {
				return nil, fmt.Errorf("%w: OpEntryPoint at word %d is too short", errSPIRV, i)
			}
			name, _, err := literalString(ins[2:])
			if err != nil {
				return nil, fmt.Errorf("%w: OpEntryPoint at word %d: %v", errSPIRV, i, err)
			}
			if ins[1] >= bound {
				return nil, fmt.Errorf("%w: entry point id %d beyond the bound %d", errSPIRV, ins[1], bound)
			}
			if ins[0] == execModelGLCompute {
				entryIDs[ins[1]] = name
			}
		case opExecutionMode:
			if len(ins) >= 5 && ins[1] == execModeLocalSize {
				local[ins[0]] = [3]uint32{ins[2], ins[3], ins[4]}
			}
		case opDecorate:
			if len(ins) >= 3 {
				b := m.Bindings[ins[0]]
				switch ins[1] {
				case decorationDescriptorSet:
					b[0] = ins[2]
					m.Bindings[ins[0]] = b
				case decorationBinding:
					b[1] = ins[2]
					m.Bindings[ins[0]] = b
				}
			}
		}
		i += wc
	}
	if inFunction {
		return nil, fmt.Errorf("%w: the module ends inside a function (cut short?)", errSPIRV)
	}
	for id, name := range entryIDs {
		if !functions[id] {
			return nil, fmt.Errorf("%w: entry point %q names %%%d, which is no function of the module", errSPIRV, name, id)
		}
		m.Entries[name] = local[id]
	}
	return m, nil
}

// literalString reads a NUL-terminated, word-padded SPIR-V string and
// returns it with the number of words it took.
func literalString(ws []uint32) (string, int, error) {
	var b []byte
	for i, w := range ws {
		for k := range 4 {
			c := byte(w >> (8 * k))
			if c == 0 {
				return string(b), i + 1, nil
			}
			b = append(b, c)
		}
	}
	return "", 0, errors.New("unterminated string")
}
