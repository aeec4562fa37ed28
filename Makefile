SHELL := /bin/bash
# kiln's front door.  `make demo` and `make test` set up everything they need:
# a virtual environment with meson, ninja, NumPy and pytest, a release build,
# and an ASan+UBSan build that runs the C tests and the Python tests again.

PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
MESON   := $(VENV)/bin/meson
NINJA   := $(VENV)/bin/ninja
BUILD   := build
SAN     := build-san
MESONFLAGS ?=

.PHONY: all build demo test test-c test-py test-san test-san-py clean bench bench-startup regen-lang gpu-test

all: build

$(VENV)/.stamp:
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q meson ninja meson-python numpy pytest
	touch $@

$(BUILD)/build.ninja: $(VENV)/.stamp
	$(MESON) setup $(BUILD) --buildtype=release $(MESONFLAGS)

build: $(BUILD)/build.ninja
	$(NINJA) -C $(BUILD)
	# a new file renamed into place: a process that has the old one loaded keeps it
	for f in $(BUILD)/_kiln*.so; do cp $$f python/kiln/.new.so && mv -f python/kiln/.new.so python/kiln/$$(basename $$f); done

demo: build
	PYTHONPATH=python $(VPY) examples/demo.py

$(SAN)/build.ninja: $(VENV)/.stamp
	$(MESON) setup $(SAN) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false $(MESONFLAGS)

test-c: build
	$(BUILD)/kiln-ctest

test-san: $(SAN)/build.ninja
	$(NINJA) -C $(SAN) kiln-ctest
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(SAN)/kiln-ctest

# The Python tests over the ASan+UBSan build of the extension: the interpreter is not
# instrumented, so the runtimes are preloaded; leaks are not checked (CPython keeps its
# own allocations to exit), every other finding stops the run.
SANPKG  := $(SAN)/pkg
SANLIBS  = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)
test-san-py: $(SAN)/build.ninja
	$(NINJA) -C $(SAN)
	rm -rf $(SANPKG) && mkdir -p $(SANPKG)/kiln
	cp python/kiln/*.py $(SAN)/_kiln*.so $(SANPKG)/kiln/
	LD_PRELOAD="$(SANLIBS)" ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 KILN_TEST_PYDIR=$(CURDIR)/$(SANPKG) \
	KILN_BUILD_DIR=$(SAN) KILN_CHECK_CUDA=1 PYTHONPATH=$(SANPKG) $(VPY) -m pytest -q -m "not gpu" tests $(PYTEST_ARGS)

test-py: build
	KILN_CHECK_CUDA=1 PYTHONPATH=python $(VPY) -m pytest -q -m "not gpu" tests

test: test-c test-san test-py test-san-py

bench: build
	$(VENV)/bin/pip install -q numba
	PYTHONPATH=python $(VPY) bench/cpu.py
	PYTHONPATH=python $(VPY) bench/launch_cpu.py

bench-startup: build
	$(VENV)/bin/pip install -q numba
	PYTHONPATH=python $(VPY) bench/startup.py

regen-lang: build
	PYTHONPATH=python $(VPY) tests/test_lang.py --regen

clean:
	rm -rf $(BUILD) $(SAN) python/kiln/_kiln*.so

# On a machine with a CUDA GPU and no network (the device machine): build with the
# system's meson and ninja, then run the GPU tests.  Logs go to $(GPU_LOG)/.
GPU_PY ?= python3
GPU_LOG ?= build-gpu/logs
gpu-test:
	sh tools/gpu-build.sh $(GPU_PY)
	mkdir -p $(GPU_LOG)
	PYTHONPATH=python $(GPU_PY) -m pytest -q -m gpu tests -p no:cacheprovider 2>&1 | tee $(GPU_LOG)/gpu-test.log; exit $${PIPESTATUS[0]}
