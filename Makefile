# The front door. `make run` and `make test` bring in dependencies and build by themselves.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CTEST := ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
BSW := $(BUILD_DIR)/operator/cmd/budgetsweep
# The trainer and its tests against the CUDA LibTorch 2.x of PyPI's torch wheel (on CPU here).
TORCH2_BUILD_DIR ?= build-torch2

# ccache hits across clones (CI builds a fresh clone in another folder): paths are hashed
# relative to the checkout, and the working directory is left out of the hash.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

# Each stage says when it begins (`== stage NAME SECONDS-SINCE-EPOCH`), so that
# scripts/test-stages.py can tell from a `make test` log where the time went.
STAGE = @echo "== stage $(1) $$(date +%s)"

.PHONY: deps configure build build-torch2 images run test test-unit test-torch2 format \
  check-format clean cluster-up cluster-down install-plugin test-sanitize

deps:
	$(call STAGE,deps)
	scripts/deps.sh all

CMAKE_CONFIGURE := cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

# With the tests: a tree `make run` configured without them gets them here.
configure: deps
	$(CMAKE_CONFIGURE) -DBSW_TESTS=ON >/dev/null

build: configure
	$(call STAGE,build)
	cmake --build $(BUILD_DIR) -j $(JOBS)

build-torch2: deps
	$(call STAGE,build-torch2)
	scripts/configure-torch2.sh $(TORCH2_BUILD_DIR)
	cmake --build $(TORCH2_BUILD_DIR) -j $(JOBS)

# OCI archives of the operator and trainer images under $(BUILD_DIR)/images (scripts/images.sh).
images: deps
	$(call STAGE,images)
	BSW_IMAGES_DIR=$(BUILD_DIR)/images scripts/images.sh

# The quickstart runs the trainer built here; each run is a new sweep in a new state directory.
# Only what a run needs: its packages, and budgetsweep and the trainer (a new tree is configured
# without the tests; one `make test` configured keeps them).
run:
	scripts/deps.sh run
	[ -f $(BUILD_DIR)/build.ninja ] || $(CMAKE_CONFIGURE) -DBSW_TESTS=OFF
	cmake --build $(BUILD_DIR) -j $(JOBS) --target budgetsweep budgetsweep-trainer
	PATH="$(CURDIR)/$(BUILD_DIR)/trainer-image:$$PATH" $(BSW) run examples/quickstart.yaml

test-unit: build
	$(CTEST) -L unit

test-torch2: build-torch2
	$(call STAGE,test-torch2)
	ctest --test-dir $(TORCH2_BUILD_DIR) --output-on-failure -j $(JOBS) -L trainer

# ASan+UBSan over every label that needs no cluster (build-asan/), TSan over the threaded adapters
# (build-tsan/); any finding fails (scripts/test-sanitize.sh).
test-sanitize: deps
	$(call STAGE,sanitize)
	JOBS=$(JOBS) scripts/test-sanitize.sh

test: build images check-format test-torch2
	$(call STAGE,ctest)
	$(CTEST)
	$(MAKE) test-sanitize
	$(call STAGE,end)

# A local cluster to try the chart on (tests/cluster/README.md): the control plane and a real node
# (containerd, runc, kubelet; needs root) with the images of `make images` imported.
# State in ~/.cache/budgetsweep/cluster; then `export KUBECONFIG=~/.cache/budgetsweep/cluster/admin.kubeconfig`.
cluster-up: images
	tests/cluster/up.sh >/dev/null
	BSW_IMAGES_DIR=$(CURDIR)/$(BUILD_DIR)/images tests/cluster/node_up.sh >/dev/null
	@echo "export KUBECONFIG=$${BSW_CLUSTER_DIR:-$$HOME/.cache/budgetsweep/cluster}/admin.kubeconfig"

cluster-down:
	tests/cluster/node_down.sh
	tests/cluster/down.sh

format:
	git ls-files -z '*.cc' '*.h' | xargs -0 clang-format -i

check-format: deps
	$(call STAGE,check-format)
	git ls-files -z '*.cc' '*.h' | xargs -0 -r clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD_DIR) $(TORCH2_BUILD_DIR) build-asan build-tsan

# The kubectl plugin: `make install-plugin [PREFIX=~/.local]` builds kubectl-bsw and copies it to
# $(PREFIX)/bin; with that directory on PATH, kubectl runs it as `kubectl bsw ls|trials|top|report`.
PREFIX ?= $(HOME)/.local
install-plugin: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target kubectl-bsw
	install -D -m 0755 $(BUILD_DIR)/operator/cmd/kubectl/kubectl-bsw $(PREFIX)/bin/kubectl-bsw
