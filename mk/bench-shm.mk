# 64 MiB copy into shm (reused arena region, fresh segment) against memcpy.
.PHONY: bench-shm
bench-shm:
	bench/shm.sh

bench: bench-shm
