#!/usr/bin/env bash
# Install everything elastman needs on a fresh Debian/Ubuntu machine. Idempotent.
#
#   tools/install.sh              python venv (.venv) + Cassandra jars
#   tools/install.sh --rabbitmq   ... and RabbitMQ from the distribution
#   tools/install.sh --libvirt    ... and libvirt + QEMU for the host agent
#   tools/install.sh --nova       ... and the Nova test lab (MariaDB, a Nova venv; implies --rabbitmq)
#   tools/install.sh --ycsb       ... and the YCSB workload driver (tools/ycsb)
#   tools/install.sh --prometheus ... and a Prometheus server plus the JMX exporter agent
#
# Environment:
#   ELASTMAN_VENV   virtualenv to create/use          (default: <repo>/.venv)
#   ELASTMAN_CACHE  where pinned Cassandra jars live  (default: ~/.cache/elastman)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
VENV=${ELASTMAN_VENV:-$REPO/.venv}
CACHE=${ELASTMAN_CACHE:-$HOME/.cache/elastman}
WITH_RABBITMQ=0
WITH_LIBVIRT=0
WITH_YCSB=0
WITH_NOVA=0
WITH_PROMETHEUS=0
for arg in "$@"; do
    case $arg in
        --rabbitmq) WITH_RABBITMQ=1 ;;
        --libvirt) WITH_LIBVIRT=1 ;;
        --ycsb) WITH_YCSB=1 ;;
        --nova) WITH_NOVA=1; WITH_RABBITMQ=1 ;;
        --prometheus) WITH_PROMETHEUS=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument $arg" >&2; exit 2 ;;
    esac
done

log() { echo "[install] $*"; }

APT_UPDATED=0
apt_install() {
    if ! command -v apt-get >/dev/null; then
        echo "install.sh: need the packages '$*' and no apt-get to install them" >&2
        exit 1
    fi
    if [ "$APT_UPDATED" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get -qq update
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends "$@" >/dev/null
}

# --- system packages -------------------------------------------------------
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
if ! command -v java >/dev/null || [ "$(java_major)" -lt 17 ]; then
    log "installing a JDK 17"
    apt_install openjdk-17-jdk-headless
fi
command -v mvn >/dev/null || { log "installing maven"; apt_install maven; }
python3 -c 'import venv, ensurepip' 2>/dev/null || { log "installing python3-venv"; apt_install python3-venv; }
command -v shellcheck >/dev/null || { log "installing shellcheck (devstack plugin test)"; apt_install shellcheck; }
if [ "$WITH_PROMETHEUS" = 1 ] && ! command -v prometheus >/dev/null; then
    log "installing prometheus"
    apt_install prometheus
fi
if [ "$WITH_RABBITMQ" = 1 ] && ! command -v rabbitmq-server >/dev/null; then
    log "installing rabbitmq-server"
    apt_install rabbitmq-server
fi

# --- python ----------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
    log "creating virtualenv $VENV"
    python3 -m venv "$VENV"
fi
STAMP=$VENV/.elastman-installed
REQ_HASH=$(cat "$REPO/requirements.txt" "$REPO/test-requirements.txt" "$REPO/upper-constraints.txt" \
    "$REPO/setup.cfg" "$REPO/pyproject.toml" | sha256sum | cut -d' ' -f1)
# the stamp alone is not enough: a venv shared with another checkout may
# have lost this one's editable install (and with it the entry points)
editable_here() {
    "$VENV/bin/python" -I -c "import importlib.metadata as m, os, sys, elastman
m.distribution('elastman')
here = os.path.dirname(os.path.realpath(elastman.__file__))
sys.exit(here != os.path.realpath('$REPO/elastman'))" 2>/dev/null
}
if [ "$(cat "$STAMP" 2>/dev/null)" != "$REQ_HASH" ] || ! editable_here; then
    log "installing python requirements into $VENV"
    # a build's egg-info in the tree (setup.py, pip wheel) would shadow the
    # installed metadata, entry points included, for code run from here
    rm -rf "$REPO/elastman.egg-info"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -c "$REPO/upper-constraints.txt" \
        -r "$REPO/requirements.txt" -r "$REPO/test-requirements.txt"
    "$VENV/bin/pip" install -q --no-deps -e "$REPO"
    # tox runs pep8, docs, releasenotes, genpolicy and genconfig in
    # environments of its own (tox.ini); it is not a test requirement
    "$VENV/bin/pip" install -q 'tox>=4'
    echo "$REQ_HASH" > "$STAMP"
else
    log "python requirements up to date"
fi

# --- Cassandra jars (pinned in tools/cassandra/pom.xml) --------------------
CASSANDRA_VERSION=$(sed -n 's:.*<cassandra.version>\(.*\)</cassandra.version>.*:\1:p' "$REPO/tools/cassandra/pom.xml")
LIB=$CACHE/cassandra-$CASSANDRA_VERSION/lib
if [ ! -f "$LIB/.complete" ]; then
    log "fetching Cassandra $CASSANDRA_VERSION jars into $LIB"
    rm -rf "$LIB"
    mkdir -p "$LIB"
    mvn -q -B -f "$REPO/tools/cassandra/pom.xml" dependency:copy-dependencies \
        -DoutputDirectory="$LIB" -DincludeScope=runtime
    ls "$LIB"/cassandra-all-*.jar >/dev/null
    touch "$LIB/.complete"
else
    log "Cassandra $CASSANDRA_VERSION jars present in $LIB"
fi
# --- the Prometheus JMX exporter agent (pinned in tools/prometheus/pom.xml) -
if [ "$WITH_PROMETHEUS" = 1 ]; then
    EXPORTER_VERSION=$(sed -n 's:.*<jmx.exporter.version>\(.*\)</jmx.exporter.version>.*:\1:p' "$REPO/tools/prometheus/pom.xml")
    EXPORTER=$CACHE/jmx-exporter-$EXPORTER_VERSION
    if [ ! -f "$EXPORTER/jmx_prometheus_javaagent-$EXPORTER_VERSION.jar" ]; then
        log "fetching the JMX exporter agent $EXPORTER_VERSION into $EXPORTER"
        mkdir -p "$EXPORTER"
        mvn -q -B -f "$REPO/tools/prometheus/pom.xml" dependency:copy-dependencies \
            -DoutputDirectory="$EXPORTER" -DexcludeTransitive=true
    else
        log "JMX exporter agent $EXPORTER_VERSION present in $EXPORTER"
    fi
fi
if [ "$WITH_LIBVIRT" = 1 ]; then
    ELASTMAN_VENV=$VENV "$REPO/tools/install-libvirt.sh"
fi
if [ "$WITH_NOVA" = 1 ]; then
    ELASTMAN_CACHE=$CACHE "$REPO/tools/nova-lab/install.sh"
fi
if [ "$WITH_YCSB" = 1 ]; then
    ELASTMAN_CACHE=$CACHE "$REPO/tools/ycsb/install.sh"
fi
log "done"
