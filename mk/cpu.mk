# CPU backends (backends/c, backends/cblas): runtime-vs-native benchmarks.
# `make bench-cpu` prints, per benchmark, the runtime and native times and
# their ratio (native/runtime). BENCH_CPU_FLAGS adds flags, e.g. -reps 9.
BENCH_CPU_FLAGS ?=

.PHONY: bench-cpu

bench: bench-cpu

bench-cpu:
	$(GO) test -run '^$$' -bench . -benchtime 1x -v ./bench/cpu/compare $(BENCH_CPU_FLAGS)
