# The two commands of the README: `make book` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: book test exercises clean venv

venv: $(VENV)/.installed

# Exact pins: a fresh machine gets what was tested.
$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

# Executes every book page (cached in _build/.jupyter_cache) and renders _build/html.
book: venv
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

test: venv
	$(PY) -m pytest

# Regenerate every student notebook in exercises/ from solutions/.
exercises: venv
	$(PY) -m autograde compile

clean:
	rm -rf _build
