# The two commands of the README: `make check` and `make demo`.
# Both install what is missing (scripts/setup.sh), configure and build.

BUILD_DIR ?= build
ATTNC_CUDA_ROOT ?= /usr/local/cuda
JOBS ?= $(shell nproc)

.PHONY: all setup configure build check fuzz-check wheel wheel-check demo docs clean

all: build

setup:
	@ATTNC_CUDA_ROOT=$(ATTNC_CUDA_ROOT) scripts/setup.sh

$(BUILD_DIR)/build.ninja: | setup
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DATTNC_CUDA_ROOT=$(ATTNC_CUDA_ROOT)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	ninja -C $(BUILD_DIR) -j$(JOBS)

# Builds everything and runs the whole lit suite (dialect, passes, pipeline
# down to PTX and cubins, runtime and Python CPU tests).
check: build
	ninja -C $(BUILD_DIR) check-attnc

# The sanitizer build (clang-22, ASan + UBSan) of the tools and the runtime
# tests, its lit run, the fuzz regressions and a time-bounded fuzz pass
# (FUZZ_SECONDS per target, default 60). docs/fuzzing.md.
fuzz-check: setup
	@ATTNC_CUDA_ROOT=$(ATTNC_CUDA_ROOT) JOBS=$(JOBS) scripts/fuzz.sh check

# The Python wheel (docs/pytorch.md): the package, libattnc_runtime.so
# (checked against the manylinux_2_34 tag) and the prebuilt sm_90a kernel
# library compiled by this build, into dist/.
wheel: build
	python3 scripts/build_wheel.py --build-dir $(BUILD_DIR) --out dist

# Installs dist/'s wheel into a fresh virtual environment (offline) and runs
# the Python CPU tests against the installed copy.
wheel-check: wheel
	scripts/wheel-check.sh $(BUILD_DIR)

# Takes the example attention graph through the compiler and prints what it
# did; runs it on the GPU when one is present.
demo: build
	@scripts/demo.sh $(BUILD_DIR)

docs: build
	rm -rf docs/generated && mkdir -p docs/generated
	cp -r $(BUILD_DIR)/docs/Dialects $(BUILD_DIR)/docs/Passes docs/generated/

clean:
	rm -rf $(BUILD_DIR) dist
