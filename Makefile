# The two set-up commands of README.md. Each builds the virtual environment from this project's
# own setup.cfg on first use, so a fresh machine (Python 3.11 + Java 17) needs nothing else.
PYTHON ?= python3
VENV   ?= .venv
NAME_DIR ?= $(HOME)/.nnlite/name
PORT ?= 9870
SECONDARY_PORT ?= 9868
HA_DIR ?= $(HOME)/.nnlite/ha
SECURE_DIR ?= $(HOME)/.nnlite/secure
HA_PORTS ?= 9870 9871
HA_RPC_PORTS ?= 8020 8021

FLINK_VENV ?= .venv-flink

.PHONY: run run-ha run-secure test test-fast lint typecheck venv flink-env clean browser etcd kerberos

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

# A local secure set to try Kerberos with (README, "Secure mode"): a realm on loopback (MIT's
# krb5kdc: `make kerberos` installs it as root), the principals and keytabs, a namenode and its
# secondary in kerberos mode, under $(SECURE_DIR); it prints the lines to paste (kinit, ...).
run-secure: $(VENV)/.installed
	$(VENV)/bin/nnlite run-secure --base-dir $(SECURE_DIR)

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

# Secure mode (README, "Secure mode") runs MIT Kerberos: its tests start a KDC of their own
# (tests/kerberos_realm.py: Debian's krb5kdc and kadmin.local on a free loopback port, a realm
# in a temporary directory), and the namenode accepts tickets through PyPI's gssapi, built
# against MIT's libgssapi_krb5. Installing krb5-kdc, krb5-admin-server and krb5-user upgrades
# the installed MIT Kerberos libraries to the release's current security update: that upgrade,
# and only that one, is allowed (KRB5_UPGRADES), and the recipe says so before doing it; any
# other upgrade or a removal in apt's simulation, or NO_KERBEROS=1, installs nothing and the
# secure-mode tests are skipped, saying what to install. The daemons' own services are stopped
# and disabled: the tests start their own KDC.
KRB5_UPGRADES := libkrb5-3 libgssapi-krb5-2 libk5crypto3 libkrb5support0 krb5-locales
KRB5_PACKAGES := krb5-kdc krb5-admin-server krb5-user
kerberos:
	@if command -v krb5kdc >/dev/null 2>&1; then :; \
	elif [ -n "$(NO_KERBEROS)" ]; then echo "make: NO_KERBEROS set: the secure-mode tests will be skipped"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq >/dev/null 2>&1; \
	  sim=$$(apt-get -s install --no-install-recommends --no-upgrade $(KRB5_PACKAGES) 2>/dev/null); \
	  plan=$$(echo "$$sim" | grep -E '^[0-9]+ upgraded,'); \
	  upgraded=$$(echo "$$sim" | sed -n 's/^Inst \([^ ]*\) \[\([^]]*\)\] (\([^ ]*\).*/\1 \2 -> \3/p'); \
	  other=$$(echo "$$upgraded" | awk 'NF { print $$1 }' | grep -vxF -e $$(echo $(KRB5_UPGRADES) | sed 's/ / -e /g')); \
	  case "$$plan" in \
	  *" 0 to remove"*) \
	    if [ -n "$$other" ]; then \
	      echo "make: not installing MIT Kerberos: apt-get would also upgrade" $$other "($$plan);" \
	           "the secure-mode tests will be skipped"; \
	    else \
	      echo "make: installing Debian's MIT Kerberos for the secure-mode tests ($$plan; NO_KERBEROS=1 skips)"; \
	      [ -z "$$upgraded" ] || echo "$$upgraded" | sed 's/^/make: upgrading the MIT Kerberos library (security update) /'; \
	      if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --no-upgrade $(KRB5_PACKAGES) >/dev/null; then \
	        for s in krb5-kdc krb5-admin-server; do invoke-rc.d $$s stop >/dev/null 2>&1; \
	          update-rc.d $$s disable >/dev/null 2>&1; deb-systemd-helper disable $$s.service >/dev/null 2>&1; done; \
	        echo "make: krb5-kdc's and kadmind's own services stopped and disabled: the tests start their own KDC"; \
	      else echo "make: MIT Kerberos could not be installed: the secure-mode tests will be skipped"; fi; \
	    fi;; \
	  *) echo "make: not installing MIT Kerberos: apt-get would remove packages" \
	          "($${plan:-no plan}); the secure-mode tests will be skipped";; \
	  esac; \
	else echo "make: MIT Kerberos not installed (as root, make kerberos installs it): the secure-mode tests will be skipped"; fi

# PyPI's gssapi compiles against MIT's headers, which Debian ships in libkrb5-dev. Installing
# that package would also upgrade e2fsprogs' libcom-err2 (comerr-dev pins it), which the rule
# above forbids, so the recipe downloads the three -dev packages and unpacks them under
# $(VENV)/krb5-dev instead: headers and a krb5-config pointing at them, linking against the
# installed libraries. Nothing outside the virtual environment changes.
KRB5_DEV := $(abspath $(VENV))/krb5-dev
$(VENV)/.kerberos: $(VENV)/.installed | kerberos
	@if command -v krb5kdc >/dev/null && command -v apt-get >/dev/null; then \
	  rm -rf $(KRB5_DEV) && mkdir -p $(KRB5_DEV)/debs && \
	  (cd $(KRB5_DEV)/debs && apt-get download -qq libkrb5-dev krb5-multidev comerr-dev 2>/dev/null) && \
	  for d in $(KRB5_DEV)/debs/*.deb; do dpkg-deb -x $$d $(KRB5_DEV); done && \
	  for l in $(KRB5_DEV)/usr/lib/*/mit-krb5/*.so; do \
	    t=$$(readlink $$l); case "$$t" in ../*) ln -sf /usr/lib/$$(basename $$(dirname $$(dirname $$l)))/$${t#../} $$l;; esac; done && \
	  for l in $(KRB5_DEV)/usr/lib/*/libcom_err.so; do ln -sf $$(readlink $$l) $$(dirname $$l)/mit-krb5/libcom_err.so; done && \
	  sed -i -e 's|^prefix=.*|prefix=$(KRB5_DEV)/usr|' -e 's|^includedir=.*|includedir=$(KRB5_DEV)/usr/include/mit-krb5|' \
	         -e 's|^libdir=.*|libdir=$(KRB5_DEV)/usr/lib/$${tripple}/mit-krb5|' $(KRB5_DEV)/usr/bin/krb5-config && \
	  CFLAGS=-I$(KRB5_DEV)/usr/include GSSAPI_KRB5CONFIG=$(KRB5_DEV)/usr/bin/krb5-config KRB5_KRB5CONFIG=$(KRB5_DEV)/usr/bin/krb5-config \
	  PATH=$(KRB5_DEV)/usr/bin:$$PATH $(VENV)/bin/pip install --quiet -e '.[kerberos]' 2>$(KRB5_DEV)/pip.log && \
	  touch $@ && echo "make: gssapi built against MIT Kerberos for the secure-mode tests" \
	  || echo "make: gssapi could not be built ($(KRB5_DEV)/pip.log): the secure-mode tests will be skipped"; \
	else echo "make: no MIT Kerberos: the secure-mode tests will be skipped"; fi

# The habits on their own: ruff's rules (pyproject.toml's [tool.ruff]) and mypy's
# (pyproject.toml's [tool.mypy], through tests/test_typecheck.py, which links the package name).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

typecheck: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/test_typecheck.py

# The tests that start no JVM and no etcd (tests/conftest.py marks them by the fixtures they
# use): the quick loop while working; `make test` is the whole suite and what CI runs.
test-fast: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest -m "not spark and not flink and not etcd" $(PYTEST_ARGS)

# Lint first (pyflakes, import order, unused names: pyproject.toml's [tool.ruff]), then the tests.
test: $(VENV)/.installed $(FLINK_VENV)/.installed browser etcd kerberos $(VENV)/.kerberos
	$(VENV)/bin/ruff check .
	$(VENV)/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(FLINK_VENV) build *.egg-info
