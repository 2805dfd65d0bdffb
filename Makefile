# The two commands of the README: `make book` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: book test exercises clean venv system-packages

venv: $(VENV)/.installed

# Exact pins: a fresh machine gets what was tested.
$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# The course's own package (autograde), editable: importable from anywhere, no sys.path edits.
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# Executes every book page (cached in _build/.jupyter_cache) and renders _build/html.
book: venv
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

# bubblewrap and Chromium first (installed if missing, where that can be done), so that a machine without them
# stops at once with the command to run, not after the venv's install or halfway through the tests.
test: system-packages
	@$(MAKE) --no-print-directory venv
	$(VENV)/bin/ruff check .
	@# The project's own modules compiled once: where PYTHONDONTWRITEBYTECODE is set, every grading process, worker
	@# and checker the tests start would compile them again.
	$(PY) -m compileall -q autograde tests benchmarks
	$(PY) -m pytest -n $$(nproc) --dist loadfile

system-packages:
	@scripts/system-packages

# Regenerate every student notebook in exercises/ from solutions/.
exercises: venv
	$(PY) -m autograde compile

clean:
	rm -rf _build .grading-cache
