# make demo: build everything, show what this machine has (zyx-tt probe), then
# run every example bundle on the best device with --dev auto --verify. When
# that device is a CPU and the Tenstorrent emulator is available, each example
# also runs on the emulator (--dev tt-emu --verify). The last lines say what
# ran where; any failure or mismatch fails the target.
DEMO_EXAMPLES ?= vadd unary matmul bcast_rows reduce_rows tilize_square sfpu_chain
# Bundles with only a Tenstorrent variant run when a card or the emulator is
# there.
DEMO_TT_EXAMPLES ?= $(foreach d,$(patsubst examples/%/tt.json,%,$(wildcard examples/*/tt.json)),$(if $(wildcard examples/$(d)/c.json),,$(d)))
DEMO_FLAGS    ?=

.PHONY: demo

demo: build
	@zyx=$(BIN)/zyx-tt; fail=0; summary=""; \
	echo "== zyx-tt probe"; \
	$$zyx probe || fail=1; \
	emu=no; tt=no; \
	run_auto() { \
		echo; echo "== zyx-tt run examples/$$1 --dev auto --verify $(DEMO_FLAGS)$$2"; \
		out=$$($$zyx run examples/$$1 --dev auto --verify $(DEMO_FLAGS)); rc=$$?; \
		printf '%s\n' "$$out"; \
		dev=$$(printf '%s\n' "$$out" | sed -n 's/^  device    \([^ ]*\) .*/\1/p'); \
		if [ $$rc -eq 0 ]; then summary="$$summary\n  $$1: verified on $$dev"; \
		else summary="$$summary\n  $$1: FAILED (exit $$rc) on $${dev:-no device}"; fail=1; fi; \
	}; \
	if $$zyx probe --backends tt 2>/dev/null | grep -q '^  tt-emu:'; then emu=yes; fi; \
	if $$zyx probe --backends tt 2>/dev/null | grep -q '^  tt'; then tt=yes; fi; \
	for ex in $(DEMO_EXAMPLES); do \
		run_auto $$ex ""; \
		if printf '%s\n' "$$out" | grep -q '^  device .*, cpu)$$'; then \
			if [ $$emu = yes ]; then \
				echo; echo "== zyx-tt run examples/$$ex --dev tt-emu --verify $(DEMO_FLAGS)  (CPU machine: the Tenstorrent emulator too)"; \
				if $$zyx run examples/$$ex --dev tt-emu --verify $(DEMO_FLAGS); then summary="$$summary\n  $$ex: verified on tt-emu"; \
				else summary="$$summary\n  $$ex: FAILED on tt-emu"; fail=1; fi; \
			else summary="$$summary\n  $$ex: tt-emu not run (no emulator: see the tt line of zyx-tt probe)"; fi; \
		fi; \
	done; \
	for ex in $(DEMO_TT_EXAMPLES); do \
		if [ $$tt = no ]; then summary="$$summary\n  $$ex: not run (Tenstorrent only; no card or emulator)"; continue; fi; \
		run_auto $$ex "  (Tenstorrent only)"; \
	done; \
	echo; printf "== demo summary:$$summary\n"; \
	if [ $$fail -ne 0 ]; then echo "demo: some runs failed"; exit 1; fi; \
	echo "demo: every example verified"
