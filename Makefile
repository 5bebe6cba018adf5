# The two set-up commands of README.md. Each builds the virtual environment from this project's
# own setup.cfg on first use, so a fresh machine (Python 3.11 + Java 17) needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
NAME_DIR ?= $(HOME)/.nnlite/name

.PHONY: run test venv clean

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test,spark]'
	touch $@

venv: $(VENV)/.installed

run: $(VENV)/.installed
	$(VENV)/bin/nnlite run --name-dir $(NAME_DIR)

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
