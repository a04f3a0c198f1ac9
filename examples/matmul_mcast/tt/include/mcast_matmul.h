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

// Sends the block at l1 (bytes) to the receivers of the multicast
// rectangle once every one of them has room for it, then tells them it is
// there: the sender side of the handshake of matmul_multicore_reuse_mcast.
inline void mcast_block(uint32_t l1, uint32_t bytes, uint32_t start_x, uint32_t start_y, uint32_t end_x, uint32_t end_y,
                        uint32_t num_dests, uint32_t sender_sem_addr, uint32_t receiver_sem_addr) {
  volatile tt_l1_ptr uint32_t* sender_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sender_sem_addr);
  volatile tt_l1_ptr uint32_t* receiver_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem_addr);
  noc_semaphore_wait(sender_sem, num_dests);
  noc_semaphore_set(sender_sem, 0);
  noc_async_write_multicast(l1, get_noc_multicast_addr(start_x, start_y, end_x, end_y, l1), bytes, num_dests);
  noc_async_write_barrier();
  noc_semaphore_set(receiver_sem, kValid);
  noc_semaphore_set_multicast(receiver_sem_addr, get_noc_multicast_addr(start_x, start_y, end_x, end_y, receiver_sem_addr),
                              num_dests);
}
