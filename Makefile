SHELL := /bin/bash
# kiln's front door.  `make demo` and `make test` set up everything they need:
# a virtual environment with meson, ninja, NumPy and pytest, a release build,
# and an ASan+UBSan build that runs the C tests and the Python tests again.

PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
MESON   := $(VENV)/bin/meson
# meson setup looks for ninja on the PATH: the venv's, on a machine with no ninja of its own
ONPATH   = PATH="$(CURDIR)/$(VENV)/bin:$$PATH"
NINJA   := $(VENV)/bin/ninja
BUILD   := build
SAN     := build-san
MESONFLAGS ?=

.PHONY: all build demo test test-c test-py test-slow test-san test-san-py clean bench bench-startup regen-lang gpu-test
.PHONY: fuzz fuzz-build test-fuzz-short test-tsan deps deps-test docs

all: build

$(VENV)/.stamp: tools/requirements-dev.txt | deps
	[ -x $(VPY) ] || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r tools/requirements-dev.txt
	touch $@

$(BUILD)/build.ninja: $(VENV)/.stamp
	$(ONPATH) $(MESON) setup $(BUILD) --buildtype=release $(MESONFLAGS)

# the Debian packages the build (deps) and the tests (deps-test) need, installed when
# missing (tools/install-deps.sh: apt-get as root or through sudo, else what to run)
deps:
	sh tools/install-deps.sh build $(PY)

deps-test:
	sh tools/install-deps.sh test $(PY)

$(BUILD)/build.ninja: | deps

build: deps $(BUILD)/build.ninja
	$(NINJA) -C $(BUILD)
	# a new file renamed into place: a process that has the old one loaded keeps it
	for f in $(BUILD)/_kiln*.so; do cp $$f python/kiln/.new.so && mv -f python/kiln/.new.so python/kiln/$$(basename $$f); done

demo: build
	PYTHONPATH=python $(VPY) examples/demo.py

$(SAN)/build.ninja: $(VENV)/.stamp
	$(ONPATH) $(MESON) setup $(SAN) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false $(MESONFLAGS)

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
# the Python suites run on PYTEST_JOBS processes (pytest-xdist; `make test PYTEST_JOBS=0`
# runs them in this one process)
PYTEST_JOBS ?= auto
test-san-py: $(SAN)/build.ninja $(VENV)/.docs-stamp
	$(NINJA) -C $(SAN)
	rm -rf $(SANPKG) && mkdir -p $(SANPKG)/kiln
	cp python/kiln/*.py python/kiln/*.pyi python/kiln/py.typed $(SAN)/_kiln*.so $(SANPKG)/kiln/
	cp -r python/kiln/kernels python/kiln/typing python/kiln/misc $(SANPKG)/kiln/
	LD_PRELOAD="$(SANLIBS)" ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:verify_asan_link_order=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 KILN_TEST_PYDIR=$(CURDIR)/$(SANPKG) \
	KILN_BUILD_DIR=$(SAN) KILN_CHECK_CUDA=1 PYTHONPATH=$(SANPKG) $(VPY) -m pytest -q -n $(PYTEST_JOBS) -m "not gpu and not slow" tests $(PYTEST_ARGS)

test-py: build $(VENV)/.docs-stamp
	KILN_CHECK_CUDA=1 PYTHONPATH=python $(VPY) -m pytest -q -n $(PYTEST_JOBS) -m "not gpu and not slow" tests

# the tests that take minutes (marker slow): a wheel built and installed into a new venv
test-slow: build
	KILN_CHECK_CUDA=1 PYTHONPATH=python $(VPY) -m pytest -q -m "slow and not gpu" tests

test: deps-test test-c test-san test-py test-san-py test-fuzz-short test-tsan test-slow

# ---- fuzzing (tests/fuzz/README.md) ----------------------------------------------------
# libFuzzer through clang over the compiler path and the cache's readers, with ASan and
# UBSan; the core is built with coverage (fuzzer-no-link) in a build of its own.
# `make fuzz` runs each target FUZZ_SECONDS (the issue's 30 CPU-minutes per target:
# `make fuzz FUZZ_SECONDS=1800`); `make test` replays the reproducers of
# tests/fuzz/crashes/ and fuzzes each target FUZZ_SHORT seconds.  The corpus grows in
# $(FUZZ)/corpus from run to run; crashes land in $(FUZZ)/artifacts.
FUZZ    := build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_SHORT   ?= 20

$(FUZZ)/build.ninja: $(VENV)/.stamp
	CC=clang $(ONPATH) $(MESON) setup $(FUZZ) --buildtype=debugoptimized -Db_sanitize=address,undefined \
	  -Db_lundef=false -Dfuzz=true -Dc_args=-fsanitize=fuzzer-no-link $(MESONFLAGS)

fuzz-build: $(FUZZ)/build.ninja
	$(NINJA) -C $(FUZZ) fuzz-compile fuzz-bundle fuzz-cache

# the seed corpora: tests/lang's kernels (the lang cases run once, translations recorded,
# into a cache of the fuzz build's own), bundles and databases from that cache
$(FUZZ)/seeds/.stamp: tests/fuzz/make_seeds.py $(wildcard tests/lang/*.py) | build
	rm -rf $(FUZZ)/seeds && mkdir -p $(FUZZ)/seed-cache && chmod 700 $(FUZZ)/seed-cache
	KILN_CACHE_DIR=$(CURDIR)/$(FUZZ)/seed-cache PYTHONPATH=python $(VPY) tests/fuzz/make_seeds.py $(FUZZ)/seeds
	touch $@

fuzz: fuzz-build $(FUZZ)/seeds/.stamp
	tests/fuzz/run.sh $(FUZZ) $(FUZZ_SECONDS)

test-fuzz-short: fuzz-build $(FUZZ)/seeds/.stamp
	tests/fuzz/run.sh $(FUZZ) replay; r=$$?; tests/fuzz/run.sh $(FUZZ) $(FUZZ_SHORT) && exit $$r

# ---- ThreadSanitizer -------------------------------------------------------------------
# The core and the extension built with -fsanitize=thread, the thread tests run in the
# uninstrumented interpreter with libtsan preloaded; tests/tsan.supp keeps CPython's and
# NumPy's own races out, any other report stops the run.  First, the same set-up must
# report a race planted on purpose (tests/tsan_race.c), or the run proves nothing.  Tier 0
# (libtcc) is left out of this build: GCC refuses its __atomic_thread_fence under
# -fsanitize=thread, and the thread tests run with KILN_TIERS=0 (tests/conftest.py).
TSAN    := build-tsan
TSANPKG := $(TSAN)/pkg
TSANLIB  = $(shell $(CC) -print-file-name=libtsan.so)
TSANENV  = LD_PRELOAD="$(TSANLIB)" \
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp"
TSAN_TESTS = $(wildcard tests/python/test_threads.py) \
	tests/python/test_stress.py::test_stress_threads_first_launches

$(TSAN)/build.ninja: $(VENV)/.stamp
	$(ONPATH) $(MESON) setup $(TSAN) --buildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false -Dtcc=disabled $(MESONFLAGS)

test-tsan: $(TSAN)/build.ninja
	$(NINJA) -C $(TSAN)
	rm -rf $(TSANPKG) && mkdir -p $(TSANPKG) && cp -r python/kiln $(TSANPKG)/
	rm -f $(TSANPKG)/kiln/_kiln*.so && cp $(TSAN)/_kiln*.so $(TSANPKG)/kiln/
	if $(TSANENV) $(VPY) -c "import ctypes; ctypes.CDLL('$(TSAN)/libkiln-tsan-race.so').kiln_tsan_race()" \
	    2>$(TSAN)/race.log || ! grep -q "ThreadSanitizer: data race" $(TSAN)/race.log; then \
	  echo "test-tsan: ThreadSanitizer did not report the deliberate race ($(TSAN)/race.log)"; exit 1; fi
	$(TSANENV) KILN_TEST_PYDIR=$(CURDIR)/$(TSANPKG) KILN_BUILD_DIR=$(TSAN) PYTHONPATH=$(TSANPKG) \
	  $(VPY) -m pytest -q -m "not gpu" -p no:cacheprovider $(TSAN_TESTS) $(PYTEST_ARGS)

bench: build
	$(VENV)/bin/pip install -q numba
	PYTHONPATH=python $(VPY) bench/cpu.py
	PYTHONPATH=python $(VPY) bench/launch_cpu.py

bench-startup: build
	$(VENV)/bin/pip install -q numba
	PYTHONPATH=python $(VPY) bench/startup.py

# ---- documentation (docs/building-docs.md) -----------------------------------------------
# Sphinx with MyST (the Markdown pages of docs/) and autodoc (the API reference, read from the
# built package), installed into the venv the first time; warnings are errors.
DOCS    := build-docs
$(VENV)/.docs-stamp: $(VENV)/.stamp
	$(VPY) -m pip install -q "sphinx>=8,<10" "myst-parser>=4,<6"
	touch $@

docs: build $(VENV)/.docs-stamp
	$(VPY) -m sphinx -W --keep-going -q -E -b html docs $(DOCS)/html
	@echo "docs: $(DOCS)/html/index.html"

regen-lang: build
	PYTHONPATH=python $(VPY) tests/test_lang.py --regen

clean:
	rm -rf $(BUILD) $(SAN) $(FUZZ) $(TSAN) $(DOCS) python/kiln/_kiln*.so

# On a machine with a CUDA GPU and no network (the device machine): build with the
# system's meson and ninja, then run the GPU tests.  Logs go to $(GPU_LOG)/.
GPU_PY ?= python3
GPU_LOG ?= build-gpu/logs
gpu-test:
	sh tools/gpu-build.sh $(GPU_PY)
	mkdir -p $(GPU_LOG)
	PYTHONPATH=python $(GPU_PY) -m pytest -q -m gpu tests -p no:cacheprovider 2>&1 | tee $(GPU_LOG)/gpu-test.log; exit $${PIPESTATUS[0]}
