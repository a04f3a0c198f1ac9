// The binary interface between an emulated kernel (a shared object built from
// a tt-metal style kernel source) and the zyx-tt emulator that loads it.
//
// A kernel object exports two C symbols:
//   zyx_emu_kernel_abi()          returns ZYX_EMU_ABI_VERSION
//   zyx_emu_kernel_bind(api)      stores the function table
//   zyx_emu_kernel_run()          runs the kernel's entry point once
// Every API call the kernel makes goes through the table, so the object has
// no undefined symbols into the runtime and works whichever way the runtime
// was linked. The runtime knows which core and section is calling from its
// own thread-local state.
#pragma once

#include <stdint.h>

#include "zyx_emu/sfpu_ops.h"

#define ZYX_EMU_ABI_VERSION 15

// Binary and unary operation codes used through the table.
enum zyx_emu_binary_op { ZYX_BIN_ADD = 0, ZYX_BIN_SUB = 1, ZYX_BIN_MUL = 2 };
enum zyx_emu_unary_op {
  ZYX_UN_EXP = 0,
  ZYX_UN_LOG,
  ZYX_UN_SQRT,
  ZYX_UN_RECIP,
  ZYX_UN_RELU,
  ZYX_UN_SIGMOID,
  ZYX_UN_GELU,
  ZYX_UN_ABS,
  ZYX_UN_NEG,
  ZYX_UN_SQUARE,
  ZYX_UN_RSQRT,
  ZYX_UN_TANH,
  ZYX_UN_SIN,
  ZYX_UN_COS,
  ZYX_UN_FILL,      // param: f32 bits
  ZYX_UN_ADD_SCALAR,  // param: f32 bits
  ZYX_UN_MUL_SCALAR,  // param: f32 bits
  ZYX_UN_RELU_MAX,  // param: f32 bits
  ZYX_UN_RELU_MIN,  // param: f32 bits
  ZYX_UN_SILU,
  ZYX_UN_EXP2,
  ZYX_UN_LOG_WITH_BASE,  // param: f32 bits of the base's log scale
  ZYX_UN_SIGN,
  ZYX_UN_COUNT
};
// Reserved L1 of every core (below l1.unreserved_base): a block of zeros
// (MEM_ZEROS_BASE), and the slots the runtime copies each section's runtime
// args (slot 2 * processor) and common args (slot 2 * processor + 1) into.
#define ZYX_EMU_L1_SIGNALS_OFFSET 0x3000u  // 32 words: DPRINT's RAISE/WAIT signals
// The watcher mailbox the debug API writes (zyx_emu/debug_extra.h), cleared
// at each run: the ring buffer (int16 index, starting at -1; uint16 wrapped;
// 32 words), the checkpoint barrier's state, the pause flags (a byte per
// processor), the NOC transfer-size histogram (32 words), the waypoints
// (a word per processor) and the CBs the compute kernel last configured its
// unpackers and packer for (a byte each, the index + 1; 0: none).
#define ZYX_EMU_L1_DEBUG_OFFSET 0x3080u
#define ZYX_EMU_L1_DEBUG_SIZE 0x180u
#define ZYX_EMU_L1_RING_BUFFER_OFFSET 0x3080u
#define ZYX_EMU_RING_BUFFER_ELEMENTS 32u
#define ZYX_EMU_L1_CHECKPOINT_OFFSET 0x3110u
#define ZYX_EMU_L1_PAUSE_OFFSET 0x3130u
#define ZYX_EMU_L1_NOC_LOG_OFFSET 0x3140u
#define ZYX_EMU_L1_WAYPOINT_OFFSET 0x31c0u
#define ZYX_EMU_L1_OPERANDS_OFFSET 0x31e0u
#define ZYX_EMU_L1_ZEROS_OFFSET 0x4000u
#define ZYX_EMU_L1_ZEROS_SIZE 512u
#define ZYX_EMU_L1_ARGS_OFFSET 0x8000u
#define ZYX_EMU_L1_ARGS_SLOT 4096u
// Words of per-section scratch the kernel headers keep NOC state in.
#define ZYX_EMU_SCRATCH_WORDS 64

// A section's view of one circular buffer, laid out as tt-metal's
// LocalCBInterface (get_local_cb_interface). Pointers are L1 addresses.
typedef struct zyx_emu_cb_interface {
  uint32_t fifo_size;
  uint32_t fifo_limit;
  uint32_t fifo_page_size;
  uint32_t fifo_num_pages;
  uint32_t fifo_rd_ptr;
  uint32_t fifo_wr_ptr;
  union {
    uint32_t tiles_acked_received_init;
    struct {
      uint16_t tiles_acked;
      uint16_t tiles_received;
    };
  };
  uint32_t fifo_wr_tile_ptr;
} zyx_emu_cb_interface;

// Where the calling section runs.
typedef struct zyx_emu_core_info {
  uint32_t logical_x, logical_y;    // absolute logical coordinates: column, row
  uint32_t relative_x, relative_y;  // relative to the sub-device origin (no sub-devices: the same)
  uint32_t noc_x, noc_y;            // NOC coordinates (my_x, my_y; both NOCs agree)
  uint32_t grid_cols, grid_rows;    // the cores of the launch
} zyx_emu_core_info;

enum zyx_emu_reduce_op { ZYX_RED_SUM = 0, ZYX_RED_AVG = 1, ZYX_RED_MAX = 2 };
enum zyx_emu_reduce_dim { ZYX_RED_ROW = 0, ZYX_RED_COL = 1, ZYX_RED_SCALAR = 2 };
// Broadcast of operand B in FPU binary ops (tt-metal BroadcastType values).
enum zyx_emu_bcast { ZYX_BC_NONE = 0, ZYX_BC_COL = 1, ZYX_BC_ROW = 2, ZYX_BC_SCALAR = 3 };
// Compute configuration keys set by the *_init calls (compute_config).
enum zyx_emu_compute_key {
  ZYX_CK_ACC_TO_DEST = 0,     // FPU add/sub accumulate into DST (value 0/1)
  ZYX_CK_COPY_TRANSPOSE = 1,  // copy_tile transposes: 1 whole tile (wh), 2 within faces
  ZYX_CK_MM_TRANSPOSE = 2,    // matmul transposes B (value 0/1)
  ZYX_CK_RELU = 3,            // pack ReLU: tt-metal packed config (mode | threshold << 16)
  ZYX_CK_L1_ACC = 4,          // pack accumulates into L1 (value 0/1)
  ZYX_CK_PACK_ROWS = 5,       // rows pack_rows packs
  ZYX_CK_DST_SYNC = 6,        // a DST hand-over call: 0 tile_regs_acquire, 1 tile_regs_commit,
                              // 2 tile_regs_wait, 3 tile_regs_release, 4 acquire_dst, 5 release_dst
  ZYX_CK_FP32_DEST_ACC = 7,   // enable/disable_fp32_dest_acc: DST holds 32-bit values from now on (value 0/1)
  ZYX_CK_BLOCK_CT_DIM = 8,    // the block width the runtime reduce_block_max_row calls reduce over
};
// Welford operations (welford).
enum zyx_emu_welford_op {
  ZYX_WF_CLEAR = 0, ZYX_WF_UPDATE = 1, ZYX_WF_SAVE = 2, ZYX_WF_RESTORE = 3, ZYX_WF_TO_ROW = 4, ZYX_WF_TO_FACE = 5
};

// What a kernel called that would end the process (kernel_exit): the
// builder links kernels with -Wl,--wrap= for each (kernel_prelude.h).
enum zyx_emu_exit_call {
  ZYX_EXIT_ABORT = 0,       // abort()
  ZYX_EXIT_EXIT = 1,        // exit(status)
  ZYX_EXIT_POSIX_EXIT = 2,  // _exit(status)
  ZYX_EXIT_C_EXIT = 3,      // _Exit(status)
  ZYX_EXIT_QUICK = 4,       // quick_exit(status)
  ZYX_EXIT_ASSERT = 5,      // a failed C assert: __assert_fail(expr, file, line, function)
};

// Compute calls with no table entry of their own (compute_special).
enum zyx_emu_compute_special {
  ZYX_CS_MATMUL_MATH = 0,          // a: dst, b: num_faces
  ZYX_CS_REDUCE_MATH = 1,          // a: dst, b: zyx_emu_reduce_op, c: zyx_emu_reduce_dim, d: num_faces
  ZYX_CS_TRANSPOSE_FACES_DST = 2,  // a: dst (each face transposed in place)
  ZYX_CS_SFPU_REDUCE = 3,          // a: dst, b: PoolType, c: DataFormat
  ZYX_CS_ADD_TOP_ROW = 4,          // a, b: inputs, c: out, d: DataFormat
  ZYX_CS_UNPACK_AB = 5,            // a, b: in0 and in1 cbs, c, d: their tiles (a matmul source pair)
  ZYX_CS_UNPACK_A = 6,             // a: cb, b: tile (what the next ZYX_CS_DATACOPY copies)
  ZYX_CS_DATACOPY = 7,             // a: dst
  ZYX_CS_CUMSUM = 8,               // a: dst, b: first (1: a column's first tile)
  ZYX_CS_REDUCE_MAX_ROW_RUNTIME = 9,  // a, b: cb and scaler cb, c: first tile, d: dst (ZYX_CK_BLOCK_CT_DIM tiles)
  ZYX_CS_RESHUFFLE_ROWS = 10,         // a: dst, b: L1 address of the row map (DST[a + 1] row map[i] += DST[a] row i)
  ZYX_CS_EMA_INIT = 11,               // a, b: alpha and beta as f32 bits
  ZYX_CS_EMA_CLEAR = 12,              // the previous output of every column becomes 0
  ZYX_CS_EMA_TILE = 13,               // a: dst (input; the averages go to DST[a + 1])
  ZYX_CS_SUM_DST_SCALAR = 14,         // a: tiles DST[0, a) summed, times b (f32 bits), into DST[0][0]
  ZYX_CS_TOPK_INIT = 15,              // topk_tile_init
  ZYX_CS_TOPK_LOCAL_SORT = 16,        // a: dst, b: idir | stable << 1, c: end | start phase << 16, d: end | start step << 16
  ZYX_CS_TOPK_MERGE = 17,             // a: dst, b: idir | stable << 1, c: m_iter, d: k
  ZYX_CS_TOPK_REBUILD = 18,           // a: dst, b: idir | stable << 1 | skip_second << 2, c: m_iter | logk << 16, d: k
  ZYX_CS_MAX_POOL_INIT = 19,          // a: DataLayout
  ZYX_CS_MAX_POOL = 20,               // a, b: values and indices dst, c: num_rows | layout << 8 | accumulate << 9, d: chunk
  // tt-llk's per-thread calls (llk_api.h): the unpack build queues operands,
  // the math build computes what unpack queued.
  ZYX_CS_LLK_UNPACK_AB = 21,  // a, b: cbs, c, d: their tiles (a binary op's pair; math names the op)
  ZYX_CS_LLK_BINARY = 22,     // a: dst, b: zyx_emu_binary_op, c: zyx_emu_bcast
  ZYX_CS_LLK_MATMUL = 23,     // a: dst (the pair llk_unpack_AB_matmul queued)
  ZYX_CS_LLK_UNTILIZE = 24,   // a: cb, b: tiles of the block, c: 0 both passes, 1 the first, 2 the second
};

// The SFPU's DST access for SFPI kernels (sfpu_dst). Addresses are DST rows
// (16 elements; tile t starts at row 64 t) relative to the SFPU's Dst read/write
// counter, as SFPLOAD/SFPSTORE address them.
enum zyx_emu_sfpu_dst_op {
  ZYX_SFPU_LOAD = 0,       // the 4-row group holding row counter + arg
  ZYX_SFPU_STORE = 1,      // the same, for a store (marks the tile written)
  ZYX_SFPU_INCR = 2,       // counter += arg (dst_reg++: 2 rows)
  ZYX_SFPU_SET_TILE = 3,   // counter = carriage return = 64 arg (set_dst_write_addr)
  ZYX_SFPU_CR_ADD = 4,     // counter = carriage return += arg (SETRWC CR_D)
  ZYX_SFPU_MARK_INT = 5,   // SFPI stores to DST tile arg are 32-bit integers (a 32-bit DST only)
  ZYX_SFPU_MARK_F32 = 6,   // SFPI stores to DST tile arg are fp32 words (a 32-bit DST only)
};
// sfpu_dst flags: DST is 32-bit; the address selects the odd columns; the
// tile's contents (ZYX_SFPU_KIND_*, bits 4-5).
enum zyx_emu_sfpu_flag { ZYX_SFPU_FP32 = 1, ZYX_SFPU_ODD = 2 };
enum zyx_emu_special_op { ZYX_SPECIAL_READ = 0, ZYX_SPECIAL_CLEAR = 1, ZYX_SPECIAL_STORE = 2 };
// The flags' bits (tt-metal's tech report on special values): the FPU's
// denormal, infinity/overflow and int32 saturation, the SFPU's NaN,
// infinity, denormal and int32 overflow.
enum zyx_emu_special_bit {
  ZYX_SPECIAL_FPU_DENORM = 1u << 6,
  ZYX_SPECIAL_FPU_INF = 1u << 5,
  ZYX_SPECIAL_FPU_INT_SAT = 1u << 4,
  ZYX_SPECIAL_SFPU_NAN = 1u << 3,
  ZYX_SPECIAL_SFPU_INF = 1u << 2,
  ZYX_SPECIAL_SFPU_DENORM = 1u << 1,
  ZYX_SPECIAL_SFPU_INT_OVF = 1u << 0,
};
enum zyx_emu_sfpu_kind { ZYX_SFPU_KIND_F32 = 0, ZYX_SFPU_KIND_BF16 = 1, ZYX_SFPU_KIND_F16 = 2, ZYX_SFPU_KIND_INT = 3 };

typedef struct zyx_emu_api {
  uint32_t abi_version;
  uint32_t dram_banks;

  // Arguments. kind 0: runtime args, 1: common runtime args.
  const uint32_t* (*args)(uint32_t kind, uint32_t* count);

  // Circular buffers.
  void (*cb_reserve_back)(uint32_t cb, uint32_t pages);
  void (*cb_push_back)(uint32_t cb, uint32_t pages);
  void (*cb_wait_front)(uint32_t cb, uint32_t pages);
  void (*cb_pop_front)(uint32_t cb, uint32_t pages);
  int (*cb_pages_available_at_front)(uint32_t cb, uint32_t pages);
  int (*cb_pages_reservable_at_back)(uint32_t cb, uint32_t pages);
  uint32_t (*cb_write_ptr)(uint32_t cb);
  uint32_t (*cb_read_ptr)(uint32_t cb);
  uint32_t (*cb_page_size)(uint32_t cb);
  uint32_t (*cb_format)(uint32_t cb);
  uint32_t (*cb_num_pages)(uint32_t cb);

  // NOC. Addresses are 64-bit NOC addresses (x, y, local address).
  void (*noc_read)(uint64_t src, uint32_t dst_l1, uint32_t size);
  void (*noc_write)(uint32_t src_l1, uint64_t dst, uint32_t size);
  void (*noc_atomic_inc)(uint64_t dst, uint32_t incr);
  uint64_t (*l1_noc_addr)(uint32_t x, uint32_t y, uint32_t addr);
  void (*core_xy)(uint32_t* x, uint32_t* y);
  uint32_t (*semaphore_addr)(uint32_t id);
  // Blocks until the word at l1_addr satisfies the test (cmp 0: ==, 1: >=, 2: !=).
  void (*wait_word)(uint32_t l1_addr, uint32_t value, uint32_t cmp);
  // Returns a host pointer for an L1 address of this core.
  void* (*l1_ptr)(uint32_t l1_addr);
  // Reports a failure inside the kernel (a bad argument the kernel passed).
  void (*fail)(const char* message);

  // Compute. dst is a tile index in the destination register file.
  void (*dst_acquire)(void);
  void (*dst_release)(void);
  void (*copy_tile)(uint32_t cb, uint32_t tile, uint32_t dst);
  void (*pack_tile)(uint32_t dst, uint32_t cb, uint32_t out_tile, int out_of_order);
  void (*binary)(uint32_t op, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst);
  void (*binary_dst)(uint32_t op, uint32_t dst0, uint32_t dst1, uint32_t out);
  void (*unary)(uint32_t op, uint32_t dst, uint32_t param);
  void (*matmul)(uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose);
  void (*reduce)(uint32_t op, uint32_t dim, uint32_t cb, uint32_t scaler_cb, uint32_t t, uint32_t ts, uint32_t dst);
  void (*transpose)(uint32_t cb, uint32_t t, uint32_t dst);
  void (*typecast)(uint32_t dst, uint32_t in_format, uint32_t out_format);
  int (*fp32_dest_acc)(void);
  // ABI 5: the rest of the compute API.
  void (*compute_config)(uint32_t key, uint32_t value);
  // FPU binary op with B broadcast (zyx_emu_bcast); bcast_row selects B's row for ROW.
  void (*binary_bcast)(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1,
                       uint32_t dst, uint32_t bcast_row);
  // FPU binary op with one operand from DST[dst] (reuse 1: DST is A, 2: DST is B).
  void (*binary_reuse)(uint32_t op, uint32_t reuse, uint32_t cb, uint32_t t, uint32_t dst);
  // Unary copy with broadcast of a CB tile into DST.
  void (*unary_bcast)(uint32_t bcast, uint32_t cb, uint32_t t, uint32_t dst);
  // SFPU ops (zyx_emu_sfpu_unary_op / zyx_emu_sfpu_binary_op); params as tt-metal passes them.
  // sfpu_binary's p0 is a zyx_emu_sfpu_binary_bcast for the float ops.
  void (*sfpu_unary)(uint32_t op, uint32_t dst, uint32_t p0, uint32_t p1, uint32_t p2);
  void (*sfpu_binary)(uint32_t op, uint32_t a, uint32_t b, uint32_t out, uint32_t p0);
  void (*sfpu_ternary)(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t out, uint32_t p0);
  // Tilize `block` tiles of row-major data at the front of icb (from tile in_tile) into ocb.
  void (*tilize)(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t in_tile, uint32_t out_tile);
  // Untilize `ntiles` tiles at the front of icb into ocb's reserved pages, as one row-major strip.
  void (*untilize)(uint32_t icb, uint32_t ntiles, uint32_t ocb);
  // Pack DST tiles [dst0, dst0 + block_ct) per tile row of a block_rt x block_ct block to ocb
  // row-major, the block at column block_c of a full_ct tiles wide strip.
  void (*pack_untilize)(uint32_t dst0, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct, uint32_t block_c,
                        uint32_t ocb);
  void (*pack_rows)(uint32_t dst, uint32_t ocb, uint32_t out_index);
  void (*transpose_dst)(uint32_t dst);
  void (*copy_dst)(uint32_t from, uint32_t to);
  // mask_tile: DST[data] where DST[data + 1] (the mask) is zero becomes 0 (posinf: +inf).
  void (*mask)(uint32_t data, uint32_t posinf);
  void (*welford)(uint32_t op, uint32_t dst, uint32_t a, uint32_t b, const uint32_t* lut, uint32_t lut_size);
  // Tile shape of a CB's pages: rows, columns, faces.
  void (*tile_shape)(uint32_t cb, uint32_t* rows, uint32_t* cols, uint32_t* faces);
  // reduce_block_max_row: max over `block` tiles of each row, into column 0 of DST[dst].
  void (*reduce_max_row_block)(uint32_t cb, uint32_t scaler_cb, uint32_t t0, uint32_t block, uint32_t dst);
  void (*dprint)(const char* text);
  // The page size of the run's buffer at this DRAM address (0: none).
  uint32_t (*buffer_page_size)(uint32_t address);

  // ---- data movement and debug (ABI 5) ----
  // A host pointer for [l1_addr, l1_addr + size) of this core's L1 (an L1
  // address from the API or a plain offset); a range outside L1 fails `op`.
  void* (*l1_range)(uint32_t l1_addr, uint32_t size, const char* op);
  // Multicast write to the rectangle of a multicast NOC address.
  void (*noc_mcast_write)(uint32_t src_l1, uint64_t dst_mcast, uint32_t size, uint32_t include_self);
  // 32-bit inline write: the bytes of value whose byte_enable bit is set.
  // mcast 0: unicast dst; 1: multicast, not to self; 2: multicast including self.
  void (*noc_inline_write)(uint64_t dst, uint32_t value, uint32_t byte_enable, uint32_t mcast);
  void (*noc_atomic_inc_mcast)(uint64_t dst_mcast, uint32_t incr, uint32_t include_self);
  void (*core_info)(zyx_emu_core_info* out);
  // This section's view of circular buffer cb, brought up to date.
  zyx_emu_cb_interface* (*cb_interface)(uint32_t cb);
  // This section's scratch words (zero when its kernel starts).
  uint64_t* (*scratch)(void);
  // DPRINT: whether output is on; the TRISC tag of what follows (0: the
  // section's processor, 1-3: trisc0-2), returning the previous tag.
  int (*dprint_enabled)(void);
  uint32_t (*dprint_tag)(uint32_t tag);
  void (*waypoint)(const char* name);
  void (*assert_fail)(const char* condition, const char* file, uint32_t line);
  // A DST register tile (1024 words: f32 bits, or integers when *is_int).
  const uint32_t* (*dst_tile)(uint32_t tile, uint32_t* is_int);

  // ---- ABI 7 ----
  // unpack_tilizeA_B_block: `block` tiles of row-major A from icb0 into the
  // source registers, each with tile tile_b of icb1 (flags bit 0: rows a
  // short face lacks read as -inf, else 0).
  void (*unpack_tilize_ab)(uint32_t icb0, uint32_t icb1, uint32_t block, uint32_t tile_b, uint32_t num_faces,
                           uint32_t face_r_dim, uint32_t flags);
  void (*compute_special)(uint32_t op, uint32_t a, uint32_t b, uint32_t c, uint32_t d);

  // ---- ABI 8 ----
  // get_arg_val / get_common_arg_val (kind 0 / 1) of an index at or past the
  // `count` args the host set: the value read (0; warns once per kernel).
  uint32_t (*arg_past_end)(uint32_t kind, int32_t index, uint32_t count);

  // ---- ABI 9 ----
  // The kernel called something that would end the process (call: a
  // zyx_emu_exit_call; status for the exits; expr, file, line and function
  // for an assert, else null and 0). Inside a run it stops the kernel and
  // does not return (the run fails naming the core, the kernel and the
  // call); outside one (a static initializer) it returns, and the caller
  // makes the real call.
  void (*kernel_exit)(uint32_t call, int32_t status, const char* expr, const char* file, uint32_t line,
                      const char* function);

  // ---- ABI 10 ----
  // The kernel is throwing an exception (its own throw expressions reach
  // __cxa_throw through the prelude's wrapper): the emulator keeps the
  // throw site, named if the exception leaves the kernel.
  void (*note_throw)(void);

  // ---- ABI 11 ----
  // A NOC barrier (what: ZYX_EMU_NOC_READS for noc_async_read_barrier and
  // its _with_trid form, ZYX_EMU_NOC_WRITES for the write barriers and
  // flushes, both for the full barrier). Every transfer completes when
  // issued unless the watcher's strict NOC mode defers the reads' data to
  // their barrier (docs/emulator.md, "Debugging kernels").
  void (*noc_barrier)(uint32_t what);

  // ---- ABI 12 ----
  // SFPI: op is a zyx_emu_sfpu_dst_op. LOAD and STORE return the 64 words
  // (4 rows of 16, f32 bits or integers as DST holds them) of the row group
  // the address selects and set *flags; the other ops move the counter and
  // return null.
  uint32_t* (*sfpu_dst)(uint32_t op, int32_t arg, uint32_t* flags);

  // ---- ABI 13 ----
  // The FPU and SFPU special-value flags (op a zyx_emu_special_op): READ
  // returns them (RISCV_DEBUG_REG_FPU_STICKY_BITS' layout), CLEAR clears
  // them, STORE writes them to the word at L1 address arg.
  uint32_t (*special_flags)(uint32_t op, uint32_t arg);

  // ---- ABI 14 ----
  // dbg_read_dest_acc_row: the 8 words of DST row `row` (of math's half) as
  // the card's debug array reads them, to out (the math build only).
  void (*dst_row)(uint32_t row, uint32_t* out);

  // ---- ABI 15 ----
  // The watcher's check of the kernel's own loads and stores (write: 1 for
  // a store) of [addr, addr + size): a kernel built with the address-check
  // instrumentation (kernel_prelude.h) calls it for each access below
  // 4 GiB, where the L1 windows are; an access to pages of a CB in use that
  // the core's kernels neither reserved nor waited for fails the kernel.
  void (*cb_access)(uintptr_t addr, uintptr_t size, uint32_t write);
} zyx_emu_api;

#define ZYX_EMU_NOC_READS 1u
#define ZYX_EMU_NOC_WRITES 2u
