# The two set-up commands of README.md. Each builds the virtual environment from this project's
# own setup.cfg on first use, so a fresh machine (Python 3.11 + Java 17) needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
NAME_DIR ?= $(HOME)/.nnlite/name
PORT ?= 9870
SECONDARY_PORT ?= 9868

FLINK_VENV ?= .venv-flink

.PHONY: run test venv flink-env clean browser

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test,spark]'
	touch $@

venv: $(VENV)/.installed

# PyFlink in an environment of its own (tests/flink/requirements.txt says why); the tests marked
# `flink` run their jobs with $(FLINK_VENV)/bin/python.
$(FLINK_VENV)/.installed: tests/flink/requirements.txt
	$(PYTHON) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/pip install --quiet --upgrade pip
	$(FLINK_VENV)/bin/pip install --quiet -r tests/flink/requirements.txt
	touch $@

flink-env: $(FLINK_VENV)/.installed

run: $(VENV)/.installed
	$(VENV)/bin/nnlite run --name-dir $(NAME_DIR) --port $(PORT) --secondary-port $(SECONDARY_PORT)

# The status-page test renders the page in Debian's chromium. As root with apt-get, `make test`
# installs the one package `chromium` (apt-get install, no upgrade of other packages); otherwise,
# or with NO_BROWSER=1, the test is skipped and says what to install.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ -n "$(NO_BROWSER)" ]; then echo "make: NO_BROWSER set: the status-page test will be skipped"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "make: installing Debian's chromium for the status-page test (apt-get install chromium; NO_BROWSER=1 skips)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade chromium \
	  || echo "make: chromium could not be installed: the status-page test will say what to install"; \
	else echo "make: chromium not installed: the status-page test will say what to install"; fi

# Lint first (pyflakes, import order, unused names: pyproject.toml's [tool.ruff]), then the tests.
test: $(VENV)/.installed $(FLINK_VENV)/.installed browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(FLINK_VENV) build *.egg-info
