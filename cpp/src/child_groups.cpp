#include "child_groups.hpp"

#include <atomic>

namespace zyx::child_groups {

namespace {

constexpr int kSlots = 256;
std::atomic<pid_t> slots[kSlots];
static_assert(std::atomic<pid_t>::is_always_lock_free, "the signal handler needs lock-free slots");

}  // namespace

bool add(pid_t pgid) noexcept {
  if (pgid <= 1) return false;
  for (auto& s : slots) {
    pid_t empty = 0;
    if (s.compare_exchange_strong(empty, pgid)) return true;
  }
  return false;
}

void remove(pid_t pgid) noexcept {
  for (auto& s : slots) {
    pid_t want = pgid;
    if (s.compare_exchange_strong(want, 0)) return;
  }
}

void kill_all(int sig) noexcept {
  for (auto& s : slots) {
    pid_t g = s.load();
    if (g > 1) ::kill(-g, sig);
  }
}

int count() noexcept {
  int n = 0;
  for (auto& s : slots) n += s.load() > 1;
  return n;
}

}  // namespace zyx::child_groups
