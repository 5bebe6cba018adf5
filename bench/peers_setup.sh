#!/usr/bin/env bash
# The peers of bench/peers.sh from Debian's packages: etcd 3.4 (etcd-server) and ZooKeeper 3.8
# (zookeeper, whose jars, the server's and its Java client's, land in /usr/share/java). A JDK 17
# compiles and runs the load generator and runs ZooKeeper. Nothing is started here, and the
# packages' own services are not used: bench/peers.sh starts each peer on 127.0.0.1 with a
# fresh data dir and stops it by its PID.
#
#   bash bench/peers_setup.sh          # as root when something is missing
#
# It installs nothing that would upgrade or remove an installed package: apt-get's simulation
# is checked first, and the script stops and says so if it would.
set -euo pipefail

say() { echo "peers_setup: $*"; }
PACKAGES=(etcd-server zookeeper)

if command -v etcd >/dev/null && [ -f /usr/share/java/zookeeper.jar ]; then
    say "etcd and zookeeper are installed"
else
    [ "$(id -u)" = 0 ] || { say "installing ${PACKAGES[*]} needs root"; exit 1; }
    apt-get update -qq
    simulation=$(apt-get -s install -y "${PACKAGES[@]}")
    changes=$(echo "$simulation" | grep -E '^[0-9]+ upgraded, [0-9]+ newly installed, [0-9]+ to remove')
    if ! echo "$changes" | grep -qE '^0 upgraded, [0-9]+ newly installed, 0 to remove'; then
        say "apt-get would change installed packages ($changes); not installing:"
        echo "$simulation" | grep -E '^(Inst|Remv) ' | grep -E '^Remv|\[' >&2 || true
        exit 1
    fi
    say "installing ${PACKAGES[*]} ($changes)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}"
fi

for tool in java javac; do
    command -v "$tool" >/dev/null || { say "$tool is missing: install a JDK 17 (openjdk-17-jdk-headless)"; exit 1; }
done
say "$(dpkg-query -W -f '${Package} ${Version}, ' "${PACKAGES[@]}")$(java -version 2>&1 | head -1)"
