# zyx-tt-runtime, the C++ tt-runtime process (cpp/, docs/runtime.md).
# `make runtime` configures once and rebuilds incrementally into build/cpp;
# the binary lands in bin/ next to zyx-tt. RUNTIME_CMAKE_FLAGS adds options,
# e.g. RUNTIME_CMAKE_FLAGS="-DZYX_TT_METAL=ON -DTT_METAL_ROOT=$HOME/tt-metal".
RUNTIME_BUILD       ?= $(CURDIR)/build/cpp
RUNTIME_CMAKE_FLAGS ?=
RUNTIME_JOBS        ?= 2
CMAKE               ?= cmake
CTEST               ?= ctest
# The fuzz build: its own directory and compiler (clang with libFuzzer), so
# the runtime in build/cpp keeps the default compiler.
FUZZ_BUILD          ?= $(CURDIR)/build/fuzz
FUZZ_CXX            ?= $(shell command -v clang++ 2>/dev/null || command -v clang++-15 2>/dev/null || command -v clang++-14 2>/dev/null)
FUZZ_SECONDS        ?= 8

.PHONY: runtime runtime-test fuzz fuzz-test metal-check

build: runtime

runtime:
	@mkdir -p $(BIN)
	@if [ ! -f $(RUNTIME_BUILD)/Makefile ] && [ ! -f $(RUNTIME_BUILD)/build.ninja ]; then \
		$(CMAKE) -S cpp -B $(RUNTIME_BUILD) -DCMAKE_BUILD_TYPE=Release $(RUNTIME_CMAKE_FLAGS); \
	elif [ -n "$(RUNTIME_CMAKE_FLAGS)" ]; then \
		$(CMAKE) $(RUNTIME_BUILD) $(RUNTIME_CMAKE_FLAGS); \
	fi
	$(CMAKE) --build $(RUNTIME_BUILD) -j$(RUNTIME_JOBS)
	@cmp -s $(RUNTIME_BUILD)/zyx-tt-runtime $(BIN)/zyx-tt-runtime || cp $(RUNTIME_BUILD)/zyx-tt-runtime $(BIN)/zyx-tt-runtime

# The C++ tests (server table and randomized checks, process-level bad
# input, parent death, chip lock). The fuzzers run in fuzz-test.
runtime-test: runtime
	$(CTEST) --test-dir $(RUNTIME_BUILD) --output-on-failure -LE fuzz

# The libFuzzer targets (cpp/tests/fuzz), built with clang in build/fuzz.
fuzz:
	@if [ -z "$(FUZZ_CXX)" ]; then echo "fuzz: no clang++ (make deps installs clang-15); skipping the fuzzers"; exit 0; fi; \
	if [ ! -f $(FUZZ_BUILD)/Makefile ] && [ ! -f $(FUZZ_BUILD)/build.ninja ]; then \
		$(CMAKE) -S cpp -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) \
			-DZYX_TT_EMU=OFF -DZYX_TT_TESTS=OFF -DZYX_TT_FUZZ=ON -DZYX_FUZZ_SECONDS=$(FUZZ_SECONDS) || exit 1; \
	else \
		$(CMAKE) $(FUZZ_BUILD) -DZYX_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null || exit 1; \
	fi; \
	$(CMAKE) --build $(FUZZ_BUILD) -j$(RUNTIME_JOBS) --target zyx_fuzz_request zyx_fuzz_program

# Runs each fuzzer for FUZZ_SECONDS through ctest.
fuzz-test: fuzz
	@if [ -z "$(FUZZ_CXX)" ]; then exit 0; fi; \
	$(CTEST) --test-dir $(FUZZ_BUILD) -L fuzz --output-on-failure

test: runtime-test fuzz-test metal-check

# The metal layer compiled syntax-only against one whole tt-metal tree at
# the pinned commit (docs/runtime.md, "The metal check"). Skips, saying
# what it wants, when TT_METAL is unset; fetches nothing.
TT_METAL      ?=
TT_METAL_DEPS ?=
metal-check:
	@TT_METAL="$(TT_METAL)" TT_METAL_DEPS="$(TT_METAL_DEPS)" CXX="$(CXX)" sh mk/metal-check.sh
