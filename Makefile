# The two set-up commands of README.md. Each builds the virtual environment from this project's
# own setup.cfg on first use, so a fresh machine (Python 3.11 + Java 17) needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
NAME_DIR ?= $(HOME)/.nnlite/name
PORT ?= 9870
SECONDARY_PORT ?= 9868
HA_DIR ?= $(HOME)/.nnlite/ha
HA_PORTS ?= 9870 9871
HA_RPC_PORTS ?= 8020 8021

FLINK_VENV ?= .venv-flink

.PHONY: run run-ha test venv flink-env clean browser etcd

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

# A local HA set to try a failover with (README, "High availability"): three etcd members and
# two namenodes of nameservice ns1 on loopback, their name dirs, etcd's data and the set's
# configuration under $(HA_DIR). It needs an etcd binary: `make etcd` installs Debian's as root.
run-ha: $(VENV)/.installed
	$(VENV)/bin/nnlite run-ha --base-dir $(HA_DIR) $(foreach p,$(HA_PORTS),--port $(p)) \
		$(foreach p,$(HA_RPC_PORTS),--rpc-port $(p))

# The status-page test renders the page in Debian's chromium. As root with apt-get, `make test`
# refreshes apt's package lists and asks apt for a simulation first; it installs chromium and
# the packages it depends on, without the recommended ones (a headless browser needs none of
# them, and with them apt would upgrade installed libraries), only when that upgrades and
# removes nothing already installed.
# Otherwise, or with NO_BROWSER=1, it installs nothing and the test is skipped, saying what to
# install.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ -n "$(NO_BROWSER)" ]; then echo "make: NO_BROWSER set: the status-page test will be skipped"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq >/dev/null 2>&1; \
	  plan=$$(apt-get -s install --no-install-recommends --no-upgrade chromium 2>/dev/null | grep -E '^[0-9]+ upgraded,'); \
	  case "$$plan" in \
	  "0 upgraded, "*" 0 to remove"*) \
	    echo "make: installing Debian's chromium for the status-page test ($$plan; NO_BROWSER=1 skips)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --no-upgrade chromium >/dev/null \
	    || echo "make: chromium could not be installed: the status-page test will be skipped";; \
	  *) echo "make: not installing chromium: apt-get would change installed packages" \
	          "($${plan:-no plan}); the status-page test will be skipped";; \
	  esac; \
	else echo "make: chromium not installed: the status-page test will be skipped"; fi

# The HA tests (tests/client/test_etcd.py, namenode/ha) run real etcd members: Debian's
# etcd-server 3.4, whose /usr/bin/etcd the tests start themselves on free loopback ports
# (tests/etcd_cluster.py). As root with apt-get, `make test` installs it under chromium's rule:
# apt's simulation first, and only when that upgrades and removes nothing already installed.
# The package's postinst starts its own etcd (user etcd, 127.0.0.1:2379, /var/lib/etcd; through
# invoke-rc.d or systemd) and enables it at boot: a daemon the tests never use, so the recipe
# stops it and undoes both enables (SysV links, systemd unit) right after the install. Not a
# policy-rc.d instead: it would block the start but not the enable, and one written into
# /usr/sbin for the install could be left behind by an interrupted make, refusing every later
# service start on the machine. Otherwise, or with NO_ETCD=1, it installs nothing and the HA
# tests are skipped, saying what to install.
etcd:
	@if command -v etcd >/dev/null 2>&1; then :; \
	elif [ -n "$(NO_ETCD)" ]; then echo "make: NO_ETCD set: the etcd (HA) tests will be skipped"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq >/dev/null 2>&1; \
	  plan=$$(apt-get -s install --no-upgrade etcd-server 2>/dev/null | grep -E '^[0-9]+ upgraded,'); \
	  case "$$plan" in \
	  "0 upgraded, "*" 0 to remove"*) \
	    echo "make: installing Debian's etcd-server for the HA tests ($$plan; NO_ETCD=1 skips)"; \
	    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-upgrade etcd-server >/dev/null; then \
	      invoke-rc.d etcd stop >/dev/null 2>&1; \
	      update-rc.d etcd disable >/dev/null 2>&1; \
	      deb-systemd-helper disable etcd.service >/dev/null 2>&1; \
	      echo "make: etcd-server's own service stopped and disabled: the tests start their own etcd"; \
	    else echo "make: etcd-server could not be installed: the etcd (HA) tests will be skipped"; fi;; \
	  *) echo "make: not installing etcd-server: apt-get would change installed packages" \
	          "($${plan:-no plan}); the etcd (HA) tests will be skipped";; \
	  esac; \
	else echo "make: etcd not installed (as root, make etcd installs etcd-server): the etcd (HA) tests will be skipped"; fi

# Lint first (pyflakes, import order, unused names: pyproject.toml's [tool.ruff]), then the tests.
test: $(VENV)/.installed $(FLINK_VENV)/.installed browser etcd
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(FLINK_VENV) build *.egg-info
