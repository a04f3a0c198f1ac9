// tt-metal include path mirrored by zyx-tt's emulator.
#pragma once
#include "ttnn/kernel/compute/moreh_common.hpp"
