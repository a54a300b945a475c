# `make demo` and `make test` each set up .venv from nothing, then run.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
DEMO_OUT ?= outputs/demo
# Nothing here needs the network at run time: the demo builds from the bundled sample.
export HF_HUB_OFFLINE = 1
export HF_DATASETS_OFFLINE = 1
export HF_HUB_DISABLE_TELEMETRY = 1

.PHONY: demo setup test test-all lint bench gpu-smoke learn clean

$(VENV)/.core: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

# torch is pinned to the CPU build first, so trl/transformers never pull a CUDA wheel.
$(VENV)/.full: $(VENV)/.core
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[dev,llm,train,eval]'
	touch $@

# .venv with everything the tests, training and eval need (CPU torch); see the README's offline route.
setup: $(VENV)/.full

demo: $(VENV)/.core
	$(PY) -m mrtasks.build --out $(DEMO_OUT)
	$(PY) -m mrtasks.demo $(DEMO_OUT)

test: $(VENV)/.full
	$(PY) -m pytest -q

test-all: $(VENV)/.full
	$(PY) -m pytest -q -m ''

lint: $(VENV)/.full
	$(VENV)/bin/ruff check .

bench: $(VENV)/.full
	$(PY) -m mrtasks.rewards.bench --answers ../shared/data/benchmarks/math500.jsonl

# Tiny Stage I -> Stage II runs and an eval on the GPU (report: docs/gpu-smoke.md). Without CUDA it
# says so and exits 0, leaving the committed report as it is. On a GPU node install the GPU set first:
#   pip install -c constraints/gpu.txt -e '.[train,eval,vllm]' deepspeed
gpu-smoke: $(VENV)/.full
	$(PY) -m training.gpu_smoke --report docs/gpu-smoke.md

# The CPU learning testbed (report: docs/learning.md): a synthetic build, a warm-started tiny Qwen decoder, the
# GRPO baseline and MR-RLVR (masked_then_fill) over 3 seeds through training.run, Pass@k through
# eval.run: 25 min from a fresh start on a quiet 2-core machine. FULL=1 (in the same folder) adds
# step_reordering and error_correction as Stage I arms and writes docs/learning-full.md.
learn: $(VENV)/.full
	$(PY) -m training.learn $(if $(FULL),--full)

clean:
	rm -rf $(VENV) outputs .pytest_cache
