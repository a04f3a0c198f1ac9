#!/usr/bin/env bash
# bench/shm.sh: throughput of a 64 MiB copy into shared memory, as a ratio
# against plain memcpy measured in the same run.
#
#   memcpy        copy between two 64 MiB Go slices (the reference)
#   reusedRegion  copy into one shm arena region that is reused (zyx-tt's design)
#   freshSegment  create + map + copy + unmap + unlink a new segment per copy
#                 (the design the arena replaced)
#
# Env: BENCHTIME (default 1s), COUNT (default 3; the median of the runs is used).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHTIME=${BENCHTIME:-1s}
COUNT=${COUNT:-3}
bin=$(mktemp -d)/shm.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./shm/
# Each round runs all three cases back to back, so load from other processes
# falls on every case alike.
echo "\$ shm.test -test.run '^\$' -test.bench '^BenchmarkCopy64MiB\$' -test.benchtime $BENCHTIME  # x$COUNT rounds"
out=""
for _ in $(seq "$COUNT"); do
	out+=$("$bin" -test.run '^$' -test.bench '^BenchmarkCopy64MiB$' -test.benchtime "$BENCHTIME")$'\n'
done
echo "$out" | grep '^Benchmark'
echo
echo "$out" | awk '
	/^BenchmarkCopy64MiB\// {
		name = $1
		sub(/^BenchmarkCopy64MiB\//, "", name)
		sub(/-[0-9]+$/, "", name)
		for (i = 2; i < NF; i++) if ($(i+1) == "MB/s") v = $i
		n[name]++
		val[name, n[name]] = v
		if (!(name in seen)) { seen[name] = 1; order[++k] = name }
	}
	function median(name,   i, j, t, a, m) {
		m = n[name]
		for (i = 1; i <= m; i++) a[i] = val[name, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return (m % 2) ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
	}
	END {
		if (!("memcpy" in seen)) { print "no memcpy figure in the output" > "/dev/stderr"; exit 1 }
		ref = median("memcpy")
		printf "%-14s %10s  %s\n", "case", "MB/s", "vs memcpy (median of " n["memcpy"] " runs)"
		for (i = 1; i <= k; i++) {
			m = median(order[i])
			if (m < ref) printf "%-14s %10.1f  %.3f (1/%.1f of memcpy)\n", order[i], m, m / ref, ref / m
			else printf "%-14s %10.1f  %.3f\n", order[i], m, m / ref
		}
	}'
