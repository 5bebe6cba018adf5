# The two set-up commands of README.md. Each builds the virtual environment from this project's
# own setup.cfg on first use, so a fresh machine (Python 3.11 + Java 17) needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
NAME_DIR ?= $(HOME)/.nnlite/name

.PHONY: run test venv clean browser

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test,spark]'
	touch $@

venv: $(VENV)/.installed

run: $(VENV)/.installed
	$(VENV)/bin/nnlite run --name-dir $(NAME_DIR)

# The status-page test renders the page in Debian's chromium; install it when we can (root).
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	  || echo "chromium not installed: the status-page test will say what to install"; }

test: $(VENV)/.installed browser
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
