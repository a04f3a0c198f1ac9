// zyx-tt example matmul_mcast: what the data-movement kernels share.
#pragma once

#include <cstdint>

// Semaphore values of the receiver handshake.
constexpr uint32_t kInvalid = 0;
constexpr uint32_t kValid = 1;

// Waits for this core's Mb x Nb output tiles in circular buffer 16 (packed
// row by row) and writes them to block (block_row, block_col) of c, a tile
// layout matrix Nt tiles wide.
template <typename Accessor>
inline void write_output_block(const Accessor& c, uint32_t Nt, uint32_t Mb, uint32_t Nb, uint32_t block_row,
                               uint32_t block_col) {
  constexpr uint32_t cb_out = tt::CBIndex::c_16;
  const uint32_t tile_bytes = get_tile_size(cb_out);
  cb_wait_front(cb_out, Mb * Nb);
  uint32_t l1 = get_read_ptr(cb_out);
  for (uint32_t i = 0; i < Mb; i++) {
    for (uint32_t j = 0; j < Nb; j++) {
      noc_async_write_tile((block_row * Mb + i) * Nt + block_col * Nb + j, c, l1);
      l1 += tile_bytes;
    }
  }
  noc_async_write_barrier();
  cb_pop_front(cb_out, Mb * Nb);
}

// A sender's multicast: the rectangle of receiving cores (NOC coordinates),
// their count and the handshake semaphores, from seven runtime args.
struct Mcast {
  uint32_t start_x, start_y, end_x, end_y, num_dests, sender_sem_addr, receiver_sem_addr;

  // Runtime args first .. first + 6: start x, start y, end x, end y,
  // num_dests, sender semaphore id, receiver semaphore id.
  static Mcast from_args(uint32_t first) {
    return {get_arg_val<uint32_t>(first),
            get_arg_val<uint32_t>(first + 1),
            get_arg_val<uint32_t>(first + 2),
            get_arg_val<uint32_t>(first + 3),
            get_arg_val<uint32_t>(first + 4),
            get_semaphore(get_arg_val<uint32_t>(first + 5)),
            get_semaphore(get_arg_val<uint32_t>(first + 6))};
  }

  // Sends the block at l1 (bytes) to the receivers once every one of them
  // has room for it, then tells them it is there: the sender side of the
  // handshake of matmul_multicore_reuse_mcast.
  void send(uint32_t l1, uint32_t bytes) const {
    volatile tt_l1_ptr uint32_t* sender_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sender_sem_addr);
    volatile tt_l1_ptr uint32_t* receiver_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem_addr);
    noc_semaphore_wait(sender_sem, num_dests);
    noc_semaphore_set(sender_sem, 0);
    noc_async_write_multicast(l1, get_noc_multicast_addr(start_x, start_y, end_x, end_y, l1), bytes, num_dests);
    noc_async_write_barrier();
    noc_semaphore_set(receiver_sem, kValid);
    noc_semaphore_set_multicast(receiver_sem_addr,
                                get_noc_multicast_addr(start_x, start_y, end_x, end_y, receiver_sem_addr), num_dests);
  }

  // Reads the rows x cols tiles at tile (row0, col0) of a tile-layout
  // matrix `width` tiles wide into circular buffer cb, row by row, sends
  // them to the receivers' cb at the same address and pushes them.
  template <typename Accessor>
  void send_block(uint32_t cb, const Accessor& m, uint32_t width, uint32_t row0, uint32_t col0, uint32_t rows,
                  uint32_t cols) const {
    const uint32_t tile_bytes = get_tile_size(cb);
    cb_reserve_back(cb, rows * cols);
    const uint32_t start = get_write_ptr(cb);
    uint32_t l1 = start;
    for (uint32_t i = 0; i < rows; i++) {
      for (uint32_t j = 0; j < cols; j++) {
        noc_async_read_tile((row0 + i) * width + col0 + j, m, l1);
        l1 += tile_bytes;
      }
    }
    noc_async_read_barrier();
    send(start, rows * cols * tile_bytes);
    cb_push_back(cb, rows * cols);
  }
};
