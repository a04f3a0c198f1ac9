// The emulator's debug mode (docs/emulator.md, "Stepping through a kernel
// with gdb"), apart from watcher.hpp so that only the builder and the run
// depend on it.
#pragma once

namespace zyx::emu {

// Debug mode (ZYX_EMU_DEBUG set, not "0"; `zyx-tt run --debug` sets it):
// kernels build at -O0 with full debug info unless ZYX_EMU_CXXFLAGS says
// otherwise, are loaded under their cache path (so that a debugger finds
// their symbols whenever it attaches), and the first run waits until a
// debugger is attached (wait_for_debugger).
bool debug_mode();
// In debug mode, before the process's first run: says on stderr that it
// waits, then waits until a tracer (gdb) is attached to this process.
void wait_for_debugger();

}  // namespace zyx::emu
