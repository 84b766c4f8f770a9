# Every target works on a fresh clone with Go installed; tools are fetched
# through the Go module proxy at pinned versions.

GO            ?= go
BIN           ?= bin
PKG           := github.com/fastopm/fastopm
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
GIT_COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS       := -s -w \
	-X $(PKG)/pkg/version.Version=$(VERSION) \
	-X $(PKG)/pkg/version.GitCommit=$(GIT_COMMIT) \
	-X $(PKG)/pkg/version.BuildDate=$(BUILD_DATE)

# The large benchmark catalogs (docs/performance.md).
SHARED        ?= ../shared
BENCH_DIR     ?= /tmp/bench-large
BENCH8_DIR    ?= /tmp/bench-8
SHAPES_DIR    ?= /tmp/fastopm-shapes
SHAPES        := channels chain shared-bundle custom custom-large deep skips skiprange
BENCH_RUNS    ?= 5

.PHONY: all build test test-corpus test-shared verify fmt vet lint generate check-generated fuzz bench bench-catalog bench-shapes clean

all: build

## build: static opm (lean), opm-full, grpc_health_probe and opm-graphviz binaries in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags opm_lean -ldflags '$(LDFLAGS)' -o $(BIN)/opm ./cmd/opm
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/opm-full ./cmd/opm
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/grpc_health_probe ./cmd/grpc_health_probe
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/opm-graphviz ./cmd/opm-graphviz

## test: the whole test suite with the race detector (hack/test.sh, the README's test command); the differential tests on a sample of their corpora
test:
	./hack/test.sh

## test-corpus: the whole suite without -race, the differential tests over their whole corpora (hack/test-corpus.sh, -tags corpus; CI runs it after test)
test-corpus:
	./hack/test-corpus.sh

## test-shared: the differential tests over the whole shared reference set (../shared or $$OPM_SHARED_DIR): every catalog's answers against upstream's golden, the YAML fast path on the large real catalogs
test-shared:
	$(GO) test -tags sharedcatalogs -run 'Shared' ./pkg/server ./pkg/canonjson

## verify: formatting, vet, staticcheck and generated code up to date (hack/verify.sh)
verify:
	./hack/verify.sh

fmt vet lint:
	./hack/verify.sh $@

check-generated:
	./hack/verify.sh generated

## generate: regenerate pkg/api from proto/ with buf and the plugins pinned in go.mod (hack/generate.sh)
generate:
	./hack/generate.sh

## fuzz: a short run of every fuzz target (FUZZTIME each)
FUZZTIME ?= 20s
FUZZ_TARGETS := \
	./pkg/canonjson:FuzzCanonicalize ./pkg/canonjson:FuzzFastYAML ./alpha/declcfg:FuzzLoad \
	./alpha/property:FuzzChecker ./pkg/schema:FuzzCheck ./pkg/indexignore:FuzzMatch \
	./pkg/imageref:FuzzValidate ./pkg/image:FuzzUnpack ./pkg/image:FuzzDecodeRecIndex ./alpha/install:FuzzDecodeSnapshot ./pkg/bundle:FuzzDecodeFirst \
	./pkg/bundle:FuzzRender ./pkg/cache:FuzzDecodeIndex ./pkg/cache:FuzzDecodeRecord \
	./pkg/cache:FuzzStructEncoder ./alpha/property:FuzzBundleObjectData
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg)"; \
		$(GO) test -run XXX -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

## bench-catalog: build the 123 MB and 491 MB benchmark catalogs from ../shared
bench-catalog:
	@if [ ! -d $(SHARED)/tools/scalecat ]; then echo "$(SHARED) not found: no benchmark catalog"; exit 1; fi
	@[ -d $(BENCH_DIR) ] || (cd $(SHARED)/tools/scalecat && $(GO) run . -n 2 -out $(BENCH_DIR) ../../catalogs/community-operators-v4.22 ../../catalogs/certified-operators-v4.16)
	@[ -d $(BENCH8_DIR) ] || (cd $(SHARED)/tools/scalecat && $(GO) run . -n 8 -out $(BENCH8_DIR) ../../catalogs/community-operators-v4.22 ../../catalogs/certified-operators-v4.16)

## bench: wall time and peak RSS of validate and render on the benchmark catalogs, plus Go benchmarks
bench: build bench-catalog
	@$(GO) run ./hack/benchcmd -n $(BENCH_RUNS) -name "validate bench-large (123 MB)" -- $(BIN)/opm validate $(BENCH_DIR)
	@$(GO) run ./hack/benchcmd -n $(BENCH_RUNS) -name "render -o json bench-large (123 MB)" -- $(BIN)/opm render $(BENCH_DIR) -o json
	@$(GO) run ./hack/benchcmd -n $(BENCH_RUNS) -name "validate certified-operators (52 MB YAML)" -- $(BIN)/opm validate $(SHARED)/catalogs/certified-operators-v4.16
	@$(GO) run ./hack/benchcmd -n $(BENCH_RUNS) -name "render -o json certified-operators (52 MB YAML)" -- $(BIN)/opm render $(SHARED)/catalogs/certified-operators-v4.16 -o json
	@$(GO) run ./hack/benchcmd -n 3 -name "validate bench-8 (491 MB)" -- $(BIN)/opm validate $(BENCH8_DIR)
	@$(GO) run ./hack/benchcmd -n 3 -name "render -o json bench-8 (491 MB)" -- $(BIN)/opm render $(BENCH8_DIR) -o json
	$(GO) run ./hack/benchserve -opm $(BIN)/opm -catalog $(BENCH_DIR)
	$(GO) run ./hack/benchserve -opm $(BIN)/opm -catalog $(BENCH8_DIR) -load 0
	OPM_BENCH_CATALOG=$(BENCH_DIR) $(GO) test -run XXX -bench 'Large|YAMLCatalog|DecodeBundles' -benchtime 5x \
		./alpha/action ./alpha/declcfg ./alpha/model ./pkg/schema
	@$(MAKE) --no-print-directory bench-shapes

## bench-shapes: validate, serve (cold, to SERVING), alpha filter, render-graph, query updates --all and diff --check on catalogs of extreme shapes (internal/shapecat), plus their Go benchmarks; needs no ../shared
bench-shapes: build
	@$(GO) run ./hack/shapecat -out $(SHAPES_DIR)
	@for s in $(SHAPES); do \
		$(GO) run ./hack/benchcmd -n 3 -name "validate $$s" -- $(BIN)/opm validate $(SHAPES_DIR)/$$s || exit 1; \
		$(GO) run ./hack/benchserve -opm $(BIN)/opm -catalog $(SHAPES_DIR)/$$s -modes cold -runs 3 -load 0 || exit 1; \
		$(GO) run ./hack/benchcmd -n 3 -name "alpha filter (full) $$s" -- $(BIN)/opm alpha filter $(SHAPES_DIR)/$$s --config hack/filter-full.yaml || exit 1; \
		$(GO) run ./hack/benchcmd -n 3 -name "render-graph -o dot $$s" -- $(BIN)/opm alpha render-graph $(SHAPES_DIR)/$$s -o dot || exit 1; \
		$(GO) run ./hack/benchcmd -n 3 -name "query updates --all $$s" -- $(BIN)/opm alpha query updates $(SHAPES_DIR)/$$s -p shape --all || exit 1; \
		$(GO) run ./hack/benchcmd -n 3 -name "query updates --all -o json $$s" -- $(BIN)/opm alpha query updates $(SHAPES_DIR)/$$s -p shape --all -o json || exit 1; \
		$(GO) run ./hack/benchcmd -n 3 -name "diff --check $$s (itself)" -- $(BIN)/opm alpha diff $(SHAPES_DIR)/$$s $(SHAPES_DIR)/$$s --check || exit 1; \
	done
	@# -o svg refuses the channels shape (10,000 channels, past the limit).
	@for s in $(filter-out channels,$(SHAPES)); do \
		$(GO) run ./hack/benchcmd -n 3 -name "render-graph -o svg $$s" -- $(BIN)/opm alpha render-graph $(SHAPES_DIR)/$$s -o svg || exit 1; \
	done
	$(GO) test -run XXX -bench 'Shapes' -benchtime 3x ./alpha/action ./alpha/model ./pkg/schema ./pkg/cache ./alpha/updates

clean:
	rm -rf $(BIN)
