#!/usr/bin/env bash
# Run elastman on this machine, from a fresh clone: installs what it needs,
# starts a local single-node Cassandra as the store (under .state/), creates
# the schema and runs elastman-all (API on http://127.0.0.1:9870/) until
# Ctrl-C. Extra arguments go to elastman-all.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
tools/install.sh
VENV=${ELASTMAN_VENV:-$REPO/.venv}
STATE=${ELASTMAN_STATE:-$REPO/.state}
CONFIG=${ELASTMAN_CONFIG:-$STATE/elastman.conf}
mkdir -p "$STATE"
if [ ! -f "$CONFIG" ]; then
    cat > "$CONFIG" <<CONF
[DEFAULT]
state_path = $STATE

[api]
auth_strategy = noauth

[store]
contact_points = 127.0.0.1
CONF
    echo "[run] wrote $CONFIG"
fi
"$VENV/bin/elastman-manage" --config-file "$CONFIG" store start
"$VENV/bin/elastman-manage" --config-file "$CONFIG" db sync
echo "[run] starting elastman-all; the store keeps running afterwards" \
     "(stop it with: $VENV/bin/elastman-manage --config-file $CONFIG store stop)"
exec "$VENV/bin/elastman-all" --config-file "$CONFIG" "$@"
