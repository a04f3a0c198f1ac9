// The older tt-metal include path of this ttnn helper, mirrored by zyx-tt's
// emulator.
#pragma once
#include "ttnn/kernel/dataflow/generate_reduce_scaler.hpp"
