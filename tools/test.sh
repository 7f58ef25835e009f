#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (Python
# venv, Cassandra jars, RabbitMQ, libvirt/QEMU), then runs the unit tests (no
# services) and the functional tests (a real Cassandra node, a real RabbitMQ,
# a real libvirtd, all started by the tests and stopped afterwards).
#
#   tools/test.sh                  everything
#   tools/test.sh tests/unit       a subset (any pytest arguments)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
tools/install.sh --rabbitmq --libvirt --nova --prometheus
VENV=${ELASTMAN_VENV:-$REPO/.venv}
export PATH=$VENV/bin:$PATH
if [ $# -eq 0 ]; then
    set -- tests/unit tests/functional
fi
# --durations: the slowest tests, so the suite can be kept within its time
exec "$VENV/bin/python" -m pytest -p no:cacheprovider -ra --durations=30 "$@"
