# The two set-up commands of the README: `make demo` and `make test`.
# Both create .venv from constraints.txt (pinned versions) on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama-cpp-python compiles llama.cpp. Not for the build machine's own CPU (GGML_NATIVE): on a
# virtual machine with AMX (Xeon, kernel AMX permission granted) a native build crashed the
# embedded model in ggml's AMX kernels (SIGSEGV at ldtilecfg, on the first decode), so x86-64
# gets AVX2/FMA/F16C, which every x86-64 machine of the last decade runs. Override with
# LLAMA_CMAKE_ARGS=... (e.g. for a GPU build).
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
endif

.PHONY: demo test lint typecheck pytest env bench lock clean

env: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24" wheel
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,local,align,ray,inspect]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/attune-judge demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy src

# warnings are errors: see filterwarnings in pyproject.toml (a -W error here would override
# its narrow ignores of third-party warnings)
# Two workers (pytest-xdist): the tests that start real components (marked slow or browser)
# run on one of them in turn (tests/conftest.py), the rest is spread over both.
# PYTHONDONTWRITEBYTECODE (set on some machines) is unset for the tests: without bytecode
# caches every test process, and every CLI or server subprocess they start, recompiles the
# sources and pytest rewrites every test module's asserts again on each run.
# OPENBLAS_NUM_THREADS=1: two workers on two cores; with a BLAS thread pool each, the
# bootstrap's many small matrix products ran up to 5x slower from oversubscription.
pytest: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadgroup

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# Re-pin constraints.txt from the current environment (run after changing dependencies).
lock:
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^attune-judge' > constraints.txt

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
