// tt-metal include path mirrored by zyx-tt's emulator.
#pragma once
#include "ttnn/kernel/dataflow/moreh_common.hpp"
