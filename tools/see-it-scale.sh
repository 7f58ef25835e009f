#!/usr/bin/env bash
# See elastman do its job, from a fresh clone: installs what it needs
# (tools/install.sh --ycsb), then runs scenarios/see-it-scale.yaml: a store
# node, elastman-all, a two-node local Cassandra cluster, and YCSB load that
# makes elastman add a node and, when the load falls, remove one. Progress
# lines every 15 s; at the end the per-minute records and a figure (nodes,
# load and p99 against time) in the output directory. Everything it started
# is stopped on the way out, also on Ctrl-C. It takes both cores of a
# 2-core machine for about 15 minutes.
#
#   tools/see-it-scale.sh [OUTPUT_DIR]     (default: .state/see-it-scale-<time>)
#
# Exit status: 0 when a scale-out and a scale-in both completed, 1 otherwise.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
VENV=${ELASTMAN_VENV:-$REPO/.venv}
OUT=${1:-$REPO/.state/see-it-scale-$(date +%Y%m%d-%H%M%S)}
tools/install.sh --ycsb
start=$(date +%s)
"$VENV/bin/elastman-manage" evaluate scenarios/see-it-scale.yaml --out "$OUT" || true
"$VENV/bin/python" - "$OUT" "$start" <<'PY'
import json
import os
import sys
import time

out, start = sys.argv[1], float(sys.argv[2])
try:
    with open(os.path.join(out, 'summary.json')) as f:
        summary = json.load(f)
except (OSError, ValueError):
    sys.exit('see-it-scale: no summary in %s: see its logs' % out)
done = [a for a in summary.get('scale_actions', []) if a.endswith('(SUCCEEDED)')]
print('see-it-scale: %.1f minutes in all; actions: %s' % (
    (time.time() - start) / 60, '; '.join(summary.get('scale_actions', []))
    or 'none'))
print('see-it-scale: figure %s' % os.path.join(out, 'figure.png'))
kinds = {a.split()[0] for a in done}
if not {'scale_out', 'scale_in'} <= kinds:
    sys.exit('see-it-scale: elastman did not both scale out and scale in '
             'this time (see %s/decisions.csv)' % out)
print('see-it-scale: elastman scaled the cluster out and back in')
PY
