// Included by the emulator's generated wrapper before a kernel's source, as
// tt-metal's firmware includes the kernel API before a kernel: the whole
// API of the section is available even to kernels that include nothing.
#pragma once

#include "zyx_emu/common.h"
#if defined(ZYX_EMU_SECTION_COMPUTE)
#include "zyx_emu/compute.h"
#else
#include "zyx_emu/dataflow.h"
#endif
