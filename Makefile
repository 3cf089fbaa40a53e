# Two entry points: `make demo` and `make test`. Both create the virtualenv on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench profile lint venv clean agents docs

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) scripts/demo.py

# Real ACP agents for tests/real_agents: npm ci from tests/agents/package-lock.json into .cache/agents,
# once (reused while the lockfile is unchanged), plus bubblewrap for Codex.
agents:
	bash scripts/install_test_agents.sh

test: $(STAMP) agents
	$(PY) -m ruff check python tests rplugin scripts bench
	$(PY) -m mypy
	$(PY) -m pytest

# Figures, then a table against targets (bench/README.md). BENCH="chat startup" selects modules;
# BENCH_PLUGIN_ROOT=/other/checkout measures another checkout of the plugin.
bench: $(STAMP)
	$(PY) bench/run.py $(BENCH)

# Where the Python host's time goes during a chat flood: py-spy flame graph (cProfile when
# py-spy cannot be installed or attach: ACP_PROFILE_TOOL=cprofile), written to .cache/profile/.
profile: $(STAMP)
	@test -x $(VENV)/bin/py-spy || $(PY) -m pip install -q 'py-spy>=0.4,<0.5' || echo "no py-spy: cProfile instead"
	$(PY) bench/profile_flood.py

# Files made from the :Ai subcommand registry (python/acp_nvim/nvim/subcommands.py): the Lua table
# for completion, the README command table, the command index of doc/acp_nvim.txt.
docs: $(STAMP)
	$(PY) scripts/gen_docs.py

lint: $(STAMP)
	$(PY) -m ruff check python tests rplugin scripts bench
	$(PY) -m mypy

clean:
	rm -rf $(VENV) .cache
