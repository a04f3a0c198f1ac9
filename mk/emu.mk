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
