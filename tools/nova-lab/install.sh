#!/usr/bin/env bash
# One-time install of the Nova test lab (see doc/source/nova.rst). Idempotent.
#
#   tools/nova-lab/install.sh
#
# Installs MariaDB from the distribution (the lab runs a private instance of
# it; the system service is not used) and a separate virtualenv holding a
# pinned Nova, Placement and Glance, then builds the lab's synced databases
# once (a private MariaDB runs for that, and is stopped again).
#
# Environment:
#   ELASTMAN_CACHE       cache directory          (default: ~/.cache/elastman)
#   ELASTMAN_NOVA_VENV   the lab's virtualenv     (default: $ELASTMAN_CACHE/nova-venv)
set -euo pipefail

CACHE=${ELASTMAN_CACHE:-$HOME/.cache/elastman}
NOVA_VENV=${ELASTMAN_NOVA_VENV:-$CACHE/nova-venv}
PACKAGES="nova==34.0.0 openstack-placement==16.0.0 glance==33.0.0 gunicorn pymysql openstacksdk"

log() { echo "[nova-lab install] $*"; }

if ! command -v mariadbd >/dev/null && ! [ -x /usr/sbin/mariadbd ]; then
    command -v apt-get >/dev/null || { echo "need mariadb-server and no apt-get" >&2; exit 1; }
    log "installing mariadb-server"
    DEBIAN_FRONTEND=noninteractive apt-get -qq update
    DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends \
        mariadb-server mariadb-client >/dev/null
fi

STAMP=$NOVA_VENV/.nova-lab-installed
if [ "$(cat "$STAMP" 2>/dev/null)" != "$PACKAGES" ]; then
    if [ ! -x "$NOVA_VENV/bin/python" ]; then
        log "creating virtualenv $NOVA_VENV"
        python3 -m venv "$NOVA_VENV"
    fi
    log "installing $PACKAGES into $NOVA_VENV"
    "$NOVA_VENV/bin/pip" install -q --upgrade pip
    # shellcheck disable=SC2086
    "$NOVA_VENV/bin/pip" install -q $PACKAGES
    echo "$PACKAGES" > "$STAMP"
else
    log "nova lab virtualenv up to date ($NOVA_VENV)"
fi
# the synced databases every lab start copies (once per Nova version)
"$(dirname "$0")/lab.sh" prepare
log "done"
