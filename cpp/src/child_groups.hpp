// A table of the process groups the runtime must kill when it ends: code
// that starts a helper process tree (the emulator's kernel compilers) puts
// the tree in its own process group, registers the group here while it
// runs, and removes it after waiting for it. The runtime kills every
// registered group on each way out that it controls: `exit`, end of input,
// SIGTERM, SIGINT, SIGHUP, and the watchdog (docs/runtime.md, "Processes").
// A SIGKILL of the runtime itself (its parent-death signal) runs nothing,
// so each child should also arm its own parent-death signal.
#pragma once

#include <sys/types.h>

#include <csignal>

namespace zyx::child_groups {

// add registers a process group id; false when the table (256 slots) is
// full, in which case the caller should kill the group itself on failure.
bool add(pid_t pgid) noexcept;
void remove(pid_t pgid) noexcept;
// kill_all sends sig to every registered group. Async-signal-safe.
void kill_all(int sig = SIGKILL) noexcept;
// count is how many groups are registered (tests).
int count() noexcept;

}  // namespace zyx::child_groups
