# Tensix emulator (cpp/emu): its own build dir, tests and benchmark.
.PHONY: emu-test bench-emu

emu-test:
	cmake -S cpp/emu -B build/emu-dev >/dev/null
	cmake --build build/emu-dev -j2
	ctest --test-dir build/emu-dev --output-on-failure

bench-emu: build
	bench/emu/run.sh
	bench/emu/compute.sh
	bench/emu/mcast.sh

# Kernel-API coverage of the emulator headers (cpp/emu/tests/coverage).
.PHONY: emu-coverage
emu-coverage:
	python3 cpp/emu/tests/coverage/coverage.py
	python3 cpp/emu/tests/coverage/upstream_coverage.py --missing

# Regenerates the upstream API list from a tt-metal checkout (names and
# arities only): make emu-api-list TT_METAL=<checkout> TT_METAL_COMMIT=<sha>.
.PHONY: emu-api-list
TT_METAL_COMMIT ?=
emu-api-list:
	@if [ -z "$(TT_METAL)" ] || [ -z "$(TT_METAL_COMMIT)" ]; then echo "emu-api-list: set TT_METAL=<checkout> and TT_METAL_COMMIT=<sha>"; exit 2; fi
	python3 cpp/emu/tests/coverage/regen_api.py --tt-metal "$(TT_METAL)" --commit "$(TT_METAL_COMMIT)" \
		-o cpp/emu/tests/coverage/upstream_$(shell echo $(TT_METAL_COMMIT) | cut -c1-8).tsv

# The kernel sweep (cpp/emu/tests/sweep): every kernel a tt-metal checkout
# ships, compiled syntax-only by the emulator's kernel builder, each failure
# classified. TT_METAL is a checkout outside this repository; SWEEP_DIRS
# (comma-separated, relative to it) sweeps a subset; SWEEP_JOBS compilers
# run at once.
.PHONY: kernel-sweep
TT_METAL    ?=
SWEEP_DIRS  ?=
SWEEP_JOBS  ?= 1
SWEEP_FLAGS ?=
kernel-sweep: runtime
	@if [ -z "$(TT_METAL)" ]; then echo "kernel-sweep: set TT_METAL=<path to a tt-metal checkout>"; exit 2; fi
	python3 cpp/emu/tests/sweep/kernel_sweep.py --tt-metal "$(TT_METAL)" \
		--tool "$(RUNTIME_BUILD)/emu/zyx-emu-kernel-check" --jobs $(SWEEP_JOBS) \
		$(if $(SWEEP_DIRS),--dirs "$(SWEEP_DIRS)") $(SWEEP_FLAGS)

# tt-metal's programming examples on the emulator (ctest emu_ttmetal, in
# cpp/emu/tests/ttmetal_tests.cpp): the kernels of the checkout TT_METAL
# names, run unmodified with their hosts' contracts and checked with their
# hosts' goldens. TTMETAL_ONLY (comma-separated case names) runs a subset.
.PHONY: ttmetal-examples
TTMETAL_ONLY ?=
ttmetal-examples: runtime
	@if [ -z "$(TT_METAL)" ]; then echo "ttmetal-examples: set TT_METAL=<path to a tt-metal checkout>"; exit 2; fi
	ZYX_TTMETAL_EXAMPLES="$(abspath $(TT_METAL))/tt_metal/programming_examples" ZYX_TTMETAL_ONLY="$(TTMETAL_ONLY)" \
		$(CTEST) --test-dir $(RUNTIME_BUILD) -R '^emu_ttmetal$$' --output-on-failure
