# zyx-tt-runtime, the C++ tt-runtime process (cpp/, docs/runtime.md).
# `make runtime` configures once and rebuilds incrementally into build/cpp;
# the binary lands in bin/ next to zyx-tt. RUNTIME_CMAKE_FLAGS adds options,
# e.g. RUNTIME_CMAKE_FLAGS="-DZYX_TT_METAL=ON -DTT_METAL_ROOT=$HOME/tt-metal".
RUNTIME_BUILD       ?= $(CURDIR)/build/cpp
RUNTIME_CMAKE_FLAGS ?=
RUNTIME_JOBS        ?= 2
CMAKE               ?= cmake
CTEST               ?= ctest

.PHONY: runtime runtime-test

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

# The C++ tests (server fuzz/table checks, process-level bad input).
runtime-test: runtime
	$(CTEST) --test-dir $(RUNTIME_BUILD) --output-on-failure

test: runtime-test
