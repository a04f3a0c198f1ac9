// tt-metal include path mirrored by zyx-tt's emulator.
#pragma once
#include "zyx_emu/compute.h"
