#!/usr/bin/env bash
# Install and start libvirt + QEMU (TCG) for elastman-hostagent. Idempotent.
#
#   tools/install-libvirt.sh            packages, libvirt-python, start daemons
#   tools/install-libvirt.sh --no-start packages and libvirt-python only
#
# Environment:
#   ELASTMAN_VENV   virtualenv whose python gets libvirt-python and defusedxml
#                   (default: <repo>/.venv if it exists, else python3 on PATH)
#
# There is no systemd here, so this does by hand what the units would: the
# runtime directories, the libvirt-qemu user and group, virtlogd and libvirtd.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
START=1
for arg in "$@"; do
    case $arg in
        --no-start) START=0 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "install-libvirt.sh: unknown argument $arg" >&2; exit 2 ;;
    esac
done

if [ -n "${ELASTMAN_VENV:-}" ]; then
    PY=$ELASTMAN_VENV/bin/python
elif [ -x "$REPO/.venv/bin/python" ]; then
    PY=$REPO/.venv/bin/python
else
    PY=$(command -v python3)
fi

log() { echo "[install-libvirt] $*"; }

PKGS="libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev
qemu-system-x86 pkg-config python3-defusedxml numactl"
missing=()
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -qq update
    apt-get -qq install -y --no-install-recommends "${missing[@]}" >/dev/null
fi

# libvirt-python builds against libvirt-dev; it needs a C compiler.
if ! "$PY" -c 'import libvirt' 2>/dev/null; then
    command -v gcc >/dev/null || { log "apt-get install gcc"; apt-get -qq install -y --no-install-recommends gcc libc6-dev >/dev/null; }
    log "pip install libvirt-python into $PY"
    "$PY" -m pip install -q libvirt-python
fi
"$PY" -c 'import defusedxml' 2>/dev/null || { log "pip install defusedxml into $PY"; "$PY" -m pip install -q defusedxml; }

# The libvirt hook runs under /usr/bin/python3 (Debian's), which has
# python3-defusedxml from apt above.

mkdir -p /var/log/libvirt /var/run/libvirt /var/lib/libvirt/qemu /var/cache/libvirt \
    /etc/libvirt/hooks
getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
getent passwd libvirt-qemu >/dev/null || \
    useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
# What udev does elsewhere: /dev/kvm rw for group kvm, QEMU's user in it.
# Without it libvirtd sees KVM at probe time but not at start time, drops its
# capability cache and re-probes QEMU on every domain start (~35 s each).
if [ -e /dev/kvm ]; then
    getent group kvm >/dev/null || groupadd -r kvm
    chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
    id -nG libvirt-qemu | grep -qw kvm || usermod -a -G kvm libvirt-qemu
fi

if [ "$START" = 1 ]; then
    if ! pgrep -x virtlogd >/dev/null; then
        log "starting virtlogd"
        virtlogd -d
    fi
    if ! pgrep -x libvirtd >/dev/null; then
        log "starting libvirtd"
        libvirtd -d
    fi
    for _ in $(seq 50); do
        virsh -c qemu:///system version >/dev/null 2>&1 && break
        sleep 0.2
    done
    virsh -c qemu:///system version >/dev/null && log "libvirtd is up"
fi
log "done (python: $PY)"
