#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (Python
# venv, Cassandra jars, RabbitMQ, libvirt/QEMU), then runs the unit tests (no
# services) beside the functional tests (a real Cassandra node, a real
# RabbitMQ, a real libvirtd, all started by the tests and stopped afterwards).
#
#   tools/test.sh                  everything
#   tools/test.sh tests/unit       a subset (any pytest arguments)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
tools/install.sh --rabbitmq --libvirt --nova --prometheus
VENV=${ELASTMAN_VENV:-$REPO/.venv}
export PATH=$VENV/bin:$PATH
# --durations: the slowest tests, so the suite can be kept within its time
PYTEST=("$VENV/bin/python" -m pytest -p no:cacheprovider -ra --durations=30)
if [ $# -gt 0 ]; then
    exec "${PYTEST[@]}" "$@"
fi
# Everything: the unit tests run beside the functional ones at the lowest
# CPU priority (nice 19). The functional tests mostly wait on Cassandra,
# RabbitMQ and libvirt; the unit tests take the CPU they leave idle, so that
# the suite takes about as long as its functional half.
UNIT_TMP=$(mktemp -d)
trap 'rm -rf "$UNIT_TMP"' EXIT
nice -n 19 "${PYTEST[@]}" --basetemp="$UNIT_TMP/tmp" tests/unit \
    > "$UNIT_TMP/output" 2>&1 &
unit_pid=$!
rc_functional=0
"${PYTEST[@]}" tests/functional || rc_functional=$?
rc_unit=0
wait "$unit_pid" || rc_unit=$?
echo "== the unit tests (run beside the functional tests, at nice 19) =="
cat "$UNIT_TMP/output"
echo "== functional tests: exit $rc_functional; unit tests: exit $rc_unit =="
[ "$rc_functional" -eq 0 ] && [ "$rc_unit" -eq 0 ]
