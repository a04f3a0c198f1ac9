# zyx-tt build, test and demo. `make deps` installs what a fresh Debian
# machine lacks; `make test` is what CI runs; `make demo` shows the product.
GO      ?= go
BIN     := $(CURDIR)/bin
GOFLAGS ?=
export PATH := $(BIN):$(PATH)

.PHONY: all build go-build runtime deps test test-short vet fmt-check mod-check demo bench clean

all: build

build: runtime go-build

go-build:
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS) -o $(BIN)/ ./cmd/...

deps:
	bash .ci/deps.sh

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# go.mod and go.sum must be what `go mod tidy` makes of them.
mod-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

test: build vet fmt-check mod-check
	$(GO) test -race -count=1 -timeout 30m ./...

test-short: go-build
	$(GO) test -short -count=1 ./...

clean:
	rm -rf $(BIN) build

# Per-area targets (runtime, demo, bench …) live in mk/*.mk.
-include mk/*.mk
