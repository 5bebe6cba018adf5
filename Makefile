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
# refreshes apt's package lists and asks apt for a simulation first; it installs chromium (and
# the packages it needs) only when that upgrades and removes nothing already installed.
# Otherwise, or with NO_BROWSER=1, it installs nothing and the test is skipped, saying what to
# install.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ -n "$(NO_BROWSER)" ]; then echo "make: NO_BROWSER set: the status-page test will be skipped"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq >/dev/null 2>&1; \
	  plan=$$(apt-get -s install --no-upgrade chromium 2>/dev/null | grep -E '^[0-9]+ upgraded,'); \
	  case "$$plan" in \
	  "0 upgraded, "*" 0 to remove"*) \
	    echo "make: installing Debian's chromium for the status-page test ($$plan; NO_BROWSER=1 skips)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade chromium >/dev/null \
	    || echo "make: chromium could not be installed: the status-page test will be skipped";; \
	  *) echo "make: not installing chromium: apt-get would change installed packages" \
	          "($${plan:-no plan}); the status-page test will be skipped";; \
	  esac; \
	else echo "make: chromium not installed: the status-page test will be skipped"; fi

# Lint first (pyflakes, import order, unused names: pyproject.toml's [tool.ruff]), then the tests.
test: $(VENV)/.installed $(FLINK_VENV)/.installed browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(FLINK_VENV) build *.egg-info
