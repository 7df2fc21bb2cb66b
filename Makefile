# The front door. `make run` and `make test` bring in dependencies and build by themselves.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CTEST := ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
BSW := $(BUILD_DIR)/operator/cmd/budgetsweep

# ccache hits across clones (CI builds a fresh clone in another folder): paths are hashed
# relative to the checkout, and the working directory is left out of the hash.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: deps configure build run test test-unit format check-format clean

deps:
	scripts/deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The quickstart runs the trainer built here; each run is a new sweep in a new state directory.
run: build
	PATH="$(CURDIR)/$(BUILD_DIR)/trainer-image:$$PATH" $(BSW) run examples/quickstart.yaml

test-unit: build
	$(CTEST) -L unit

test: build check-format
	$(CTEST)

format:
	git ls-files -z '*.cc' '*.h' | xargs -0 clang-format -i

check-format: deps
	git ls-files -z '*.cc' '*.h' | xargs -0 -r clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD_DIR)
