//go:build amd64 && !windows

#include "textflag.h"
#include "go_asm.h"

// callTrampoline(frame *f) runs on the system stack, called by the
// runtime's cgo call with the C calling convention (System V AMD64): f in
// DI, the stack 16-byte aligned before the call. It passes f.a[0..5] in
// DI, SI, DX, CX, R8 and R9 and f.a[6..11] on the stack, calls f.fn with
// AL zero (no vector registers, for variadic callees), and stores its RAX
// in f.r. BX and BP are callee-saved in C and kept; the frame pointer
// stays in BX across the call.
TEXT callTrampoline<>(SB), NOSPLIT|NOFRAME, $0
	PUSHQ BP
	MOVQ  SP, BP
	PUSHQ BX
	MOVQ  DI, BX
	// Six stack slots and 8 bytes of padding: with the two pushes, SP is
	// 16-byte aligned at the CALL.
	SUBQ  $56, SP
	MOVQ  (frame_a+48)(BX), AX
	MOVQ  AX, 0(SP)
	MOVQ  (frame_a+56)(BX), AX
	MOVQ  AX, 8(SP)
	MOVQ  (frame_a+64)(BX), AX
	MOVQ  AX, 16(SP)
	MOVQ  (frame_a+72)(BX), AX
	MOVQ  AX, 24(SP)
	MOVQ  (frame_a+80)(BX), AX
	MOVQ  AX, 32(SP)
	MOVQ  (frame_a+88)(BX), AX
	MOVQ  AX, 40(SP)
	MOVQ  (frame_a+0)(BX), DI
	MOVQ  (frame_a+8)(BX), SI
	MOVQ  (frame_a+16)(BX), DX
	MOVQ  (frame_a+24)(BX), CX
	MOVQ  (frame_a+32)(BX), R8
	MOVQ  (frame_a+40)(BX), R9
	MOVQ  frame_fn(BX), R10
	XORL  AX, AX
	CALL  R10
	MOVQ  AX, frame_r(BX)
	ADDQ  $56, SP
	POPQ  BX
	POPQ  BP
	RET

GLOBL ·callTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·callTrampolineABI0(SB)/8, $callTrampoline<>(SB)
