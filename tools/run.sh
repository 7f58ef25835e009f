#!/usr/bin/env bash
# Run elastman on this machine, from a fresh clone: installs what it needs,
# starts a local single-node Cassandra as the store (under .state/), creates
# the schema, creates a local 3-node Cassandra cluster named "local" for
# elastman to manage (first run only: a re-run finds it), and runs
# elastman-all (API on http://127.0.0.1:9870/) until Ctrl-C. Extra arguments
# go to elastman-all.
#
# Environment:
#   ELASTMAN_VENV          virtualenv                (default: <repo>/.venv)
#   ELASTMAN_STATE         state directory           (default: <repo>/.state)
#   ELASTMAN_CONFIG        configuration file        (default: <state>/elastman.conf)
#   ELASTMAN_CLUSTER       the managed cluster's name (default: local; empty: none)
#   ELASTMAN_CLUSTER_SIZE  its nodes at creation     (default: 3)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
tools/install.sh
VENV=${ELASTMAN_VENV:-$REPO/.venv}
STATE=${ELASTMAN_STATE:-$REPO/.state}
CONFIG=${ELASTMAN_CONFIG:-$STATE/elastman.conf}
CLUSTER=${ELASTMAN_CLUSTER-local}
CLUSTER_SIZE=${ELASTMAN_CLUSTER_SIZE:-3}
MANAGE=("$VENV/bin/elastman-manage" --config-file "$CONFIG")
mkdir -p "$STATE"
if [ ! -f "$CONFIG" ]; then
    cat > "$CONFIG" <<CONF
[DEFAULT]
state_path = $STATE

[api]
auth_strategy = noauth

[store]
contact_points = 127.0.0.1

[local_cloud]
# Servers of managed clusters: Cassandra processes on 127.0.60.x (JMX port
# 17200 + x). A flavour is a CPU quota and a heap; the first one is what
# "elastman-manage local-cluster create" uses unless told otherwise. Three
# half-core nodes leave room for the store and elastman on a 2-core machine.
network = 127.0.60.0/24
flavor = small:cpu=0.5,heap=384M
flavor = medium:cpu=1,heap=512M
CONF
    echo "[run] wrote $CONFIG"
fi
"${MANAGE[@]}" store start
"${MANAGE[@]}" db sync
STOP="${MANAGE[*]} store stop"
if [ -n "$CLUSTER" ]; then
    echo "[run] local cluster $CLUSTER ($CLUSTER_SIZE nodes; the first start" \
         "takes a minute or more per node)"
    "${MANAGE[@]}" local-cluster create "$CLUSTER" --size "$CLUSTER_SIZE" \
        --exist-ok
    STOP="${MANAGE[*]} local-cluster delete $CLUSTER; $STOP"
fi
echo "[run] starting elastman-all; the store and the cluster keep running" \
     "afterwards (stop them with: $STOP)"
exec "$VENV/bin/elastman-all" --config-file "$CONFIG" "$@"
