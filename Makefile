# Entry points. Each target does its own set-up on a fresh Debian 12 machine.
#   make deps    install missing Debian packages (apt-get)
#   make build   configure and build; binaries in build/bin/
#   make test    build, then run the whole test suite (ctest), then the fuzz smoke runs (each
#                libFuzzer target for FUZZ_SMOKE_SECONDS, default 30; scripts/fuzz.sh --smoke)
#   make bench   build, then print the benchmarks (dsekp bench handshake / frames / sessions /
#                pipeline)
#   make experiment  build, then run the paper's PSK-vs-DSEKP experiment with its defaults
#                (dsekp experiment; a few minutes; results/<UTC timestamp>/report.md). Options go
#                in EXPERIMENT_ARGS, e.g. make experiment EXPERIMENT_ARGS="--link paper-wifi --packets 300"
#   make fuzz    build the libFuzzer targets (fuzz/, clang-14) and run each for FUZZ_SECONDS (60)
#   make test-sanitize  the whole test suite built with ASan + UBSan (build-asan/, clang-14)
#                and run by ctest; CI (.ci/run) runs it after `make test`
#   make demo-multi-edge  three edges sharing session state on a private Redis, one device fleet,
#                the exactly-once check over the edges (scripts/demo-multi-edge.sh, docs/SCALING.md)
#   make demo-cluster  three RabbitMQ nodes, a Redis Cluster (3 primaries + 3 replicas), three
#                edges, three fleets, the same check (scripts/demo-cluster.sh, docs/SCALING.md)
#   make deb     build, then the Debian package of this machine's architecture with CPack:
#                build/deb/dsekp_<version>_<arch>.deb (cmake/packaging.cmake)
#   make test-deb  the package checked by lintian, installed into a throwaway Debian 12 root,
#                run there against Mosquitto, removed and purged (scripts/package/test-deb.sh;
#                root; CI runs it after the sanitizer suite)
#   make deb-arm64  the arm64 package (Raspberry Pi 5), cross-built in build-arm64/ with Debian's
#                crossbuild-essential-arm64 (scripts/test-arm64.sh --package-only)
#   make test-arm64  the cross build, its package, and the portable suites (core, crypto, codecs,
#                golden trace, stores, edge service) run under qemu-user-static; CI runs it
#   make format  clang-format every C++ file in place
# ccache (installed by scripts/install-deps.sh, used by CMakeLists.txt when found): paths taken
# relative to the checkout, so that a build of another checkout (CI's fresh clone) hits the same
# cache instead of compiling everything again.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= 2
# Tests run four at a time on this 2-core machine class: most of them wait on brokers, child
# processes and timers (the plain suite used 146 s of CPU in 225 s at -j2, and took 152 s at -j4
# with every test passing).
TEST_JOBS ?= 4
EXPERIMENT_ARGS ?=

.PHONY: all deps build test bench experiment fuzz test-sanitize demo-multi-edge demo-cluster deb test-deb deb-arm64 test-arm64 format

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

FUZZ_SMOKE_SECONDS ?= 30

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(TEST_JOBS) || \
	  { bash $(CURDIR)/scripts/ctest-failure-digest.sh $(abspath $(BUILD_DIR)); exit 8; }
	@JOBS=$(JOBS) FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) bash scripts/fuzz.sh --smoke

bench: build
	@$(BUILD_DIR)/bin/dsekp bench handshake
	@$(BUILD_DIR)/bin/dsekp bench frames
	@$(BUILD_DIR)/bin/dsekp bench sessions
	@$(BUILD_DIR)/bin/dsekp bench pipeline

experiment: build
	@$(BUILD_DIR)/bin/dsekp experiment $(EXPERIMENT_ARGS)

fuzz: deps
	@JOBS=$(JOBS) bash scripts/fuzz.sh

test-sanitize: deps
	@TEST_JOBS=$(TEST_JOBS) bash scripts/test-sanitize.sh

demo-multi-edge: build
	@BUILD_DIR=$(BUILD_DIR) bash scripts/demo-multi-edge.sh

demo-cluster: build
	@BUILD_DIR=$(BUILD_DIR) bash scripts/demo-cluster.sh

deb: build
	@rm -rf $(BUILD_DIR)/deb
	@cd $(BUILD_DIR) && cpack -G DEB
	@ls $(BUILD_DIR)/deb/*.deb

test-deb: deb
	@bash scripts/package/test-deb.sh $(BUILD_DIR)/deb/dsekp_*_$$(dpkg --print-architecture).deb

deb-arm64:
	@JOBS=$(JOBS) bash scripts/test-arm64.sh --package-only

test-arm64:
	@JOBS=$(JOBS) bash scripts/test-arm64.sh

format:
	@git ls-files '*.cpp' '*.hpp' '*.h' '*.c' | xargs clang-format -i
