// tt-metal include path mirrored by zyx-tt's emulator.
#pragma once
#include "ttnn/kernel/dataflow/generate_bcast_scalar.hpp"
