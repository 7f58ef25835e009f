#!/usr/bin/env bash
# A real Nova for the functional tests: nova-api, -conductor, -scheduler and one
# nova-compute per fake host (fake virt driver), Placement, Glance, a Neutron
# stand-in, a private MariaDB, and a guest per server: a Cassandra node on the
# server's address, configured from its user data. Without Keystone a paste
# filter turns the token "<user>:<project>" into identity headers; with
# NOVA_LAB_KEYSTONE_URL, Nova, Glance and the Neutron stand-in validate real
# Keystone tokens. See doc/source/nova.rst.
#
#   tools/nova-lab/lab.sh prepare   build the synced-database template (install.sh does)
#   tools/nova-lab/lab.sh start     fresh lab (stops an old one first)
#   tools/nova-lab/lab.sh stop      stop every process of the lab, guests included
#   tools/nova-lab/lab.sh status    which processes run
#
# Needs tools/nova-lab/install.sh (once) and a RabbitMQ. Environment:
#   NOVA_LAB_DIR            lab directory            (default <repo>/.state/nova-lab)
#   NOVA_LAB_TRANSPORT_URL  oslo.messaging URL       (default rabbit://guest:guest@127.0.0.1:5672/)
#   NOVA_LAB_COMPUTES       fake hosts               (default "compute1 compute2")
#   NOVA_LAB_HOST_SIZE      vcpus:memory_mb:disk_gb of every host (default 2:2048:20)
#   NOVA_LAB_PORT_OFFSET    added to every port      (default 0: nova 8774, placement
#                           8778, glance 9292, neutron 9696, MariaDB 13306)
#   NOVA_LAB_GUEST_PYTHON   Python with elastman installed that runs the guests
#                           (default <repo>/.venv/bin/python; "none": no guests)
#   NOVA_LAB_KEYSTONE_URL   Keystone v3 URL; empty (default): no Keystone
#   NOVA_LAB_KEYSTONE_USER, _PASSWORD, _PROJECT   the service user Nova, Glance and
#                           Neutron validate tokens with and Nova calls Neutron as
#                           (admin in _PROJECT; defaults nova, -, service)
#   ELASTMAN_CACHE, ELASTMAN_NOVA_VENV               as for install.sh
# Flavours made at start: m1.tiny 1:512:1, m1.small 2:1024:5, m1.huge 64:65536:500
# (never fits), c1.node 1:768:1 with the extra specs quota:cpu_quota=100000 and
# quota:cpu_period=100000 (one CPU per vCPU); image 11111111-2222-3333-4444-555555555555.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${ELASTMAN_CACHE:-$HOME/.cache/elastman}
VENV=${ELASTMAN_NOVA_VENV:-$CACHE/nova-venv}
LAB=${NOVA_LAB_DIR:-$REPO/.state/nova-lab}
RABBIT=${NOVA_LAB_TRANSPORT_URL:-rabbit://guest:guest@127.0.0.1:5672/}
COMPUTES=${NOVA_LAB_COMPUTES:-compute1 compute2}
IFS=: read -r HOST_VCPUS HOST_RAM HOST_DISK <<< "${NOVA_LAB_HOST_SIZE:-2:2048:20}"
OFF=${NOVA_LAB_PORT_OFFSET:-0}
P_NOVA=$((8774 + OFF)); P_PLACEMENT=$((8778 + OFF)); P_GLANCE=$((9292 + OFF))
P_NEUTRON=$((9696 + OFF)); P_DB=$((13306 + OFF))
FLAVORS="m1.tiny:1:512:1 m1.small:2:1024:5 m1.huge:64:65536:500 c1.node:1:768:1:100000"
GUEST_PYTHON=${NOVA_LAB_GUEST_PYTHON:-$REPO/.venv/bin/python}
[ "$GUEST_PYTHON" = none ] && GUEST_PYTHON=""
KEYSTONE=${NOVA_LAB_KEYSTONE_URL:-}
KS_USER=${NOVA_LAB_KEYSTONE_USER:-nova}
KS_PASSWORD=${NOVA_LAB_KEYSTONE_PASSWORD:-}
KS_PROJECT=${NOVA_LAB_KEYSTONE_PROJECT:-service}
SERVICES="placement-api glance-api fake-neutron nova-api nova-conductor nova-scheduler"
T0=$EPOCHREALTIME

step() { printf '[nova-lab %6.1fs] %s\n' "$(awk "BEGIN{print $EPOCHREALTIME - $T0}")" "$*"; }
die() { echo "nova-lab: $*" >&2; exit 1; }
dburl() { echo "mysql+pymysql://os:os@127.0.0.1:$P_DB/$1?charset=utf8"; }
mysql_cli() { mariadb --socket="$LAB/run/mysql.sock" -uroot "$@"; }

# --------------------------------------------------------------- processes
# Each service runs in a session of its own, so stopping it (its process
# group) also stops gunicorn workers and any child.
svc_start() {
    local name=$1; shift
    (
        cd "$LAB" || exit 1
        export PYTHONPATH=$LAB/lib OS_NOVA_CONFIG_DIR=$LAB/etc/nova \
            OS_PLACEMENT_CONFIG_DIR=$LAB/etc/placement OS_GLANCE_CONFIG_DIR=$LAB/etc/glance \
            PATH=$VENV/bin:$PATH
        [ -n "$KEYSTONE" ] && export FAKE_NEUTRON_CONFIG=$LAB/etc/neutron.conf
        # the pid is written after setsid, which may have forked
        exec setsid sh -c 'echo $$ > "$0"; exec "$@"' "run/$name.pid" "$@" \
            > "logs/$name.out" 2>&1 < /dev/null
    ) &
    local i
    for ((i = 0; i < 50; i++)); do
        [ -s "$LAB/run/$name.pid" ] && return 0
        sleep 0.1
    done
    die "$name did not start"
}

svc_stop_all() {
    [ -d "$LAB/run" ] || return 0
    local f pids="" groups=""
    for f in "$LAB"/run/*.pid; do
        [ -e "$f" ] || continue
        [ "$(basename "$f")" = mariadb.pid ] && continue
        pids="$pids $(cat "$f")"; rm -f "$f"
    done
    for p in $pids; do
        kill -TERM -- "-$p" 2>/dev/null || true
    done
    if ! wait_gone 8 $pids; then
        for p in $pids; do
            kill -KILL -- "-$p" 2>/dev/null || true
        done
    fi
    stop_guests
    if [ -e "$LAB/run/mariadb.pid" ]; then
        local m
        m=$(cat "$LAB/run/mariadb.pid")
        kill -TERM "$m" 2>/dev/null || true
        wait_gone 30 "$m" || kill -KILL "$m" 2>/dev/null || true
        rm -f "$LAB/run/mariadb.pid"
    fi
}

# The guests' Cassandra nodes outlive nova-compute (each in a session of its
# own, as a VM outlives its hypervisor's agent): stop them, and remove their
# cgroups.
stop_guests() {
    local f p pids="" g
    for f in "$LAB"/guests/*/node/cassandra.pid; do
        [ -e "$f" ] || continue
        p=$(cat "$f")
        grep -q CassandraDaemon "/proc/$p/cmdline" 2>/dev/null || continue
        pids="$pids $p"
    done
    for p in $pids; do
        kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
    done
    if [ -n "$pids" ] && ! wait_gone 20 $pids; then
        for p in $pids; do
            kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
        done
    fi
    for g in "$LAB"/guests/*; do
        [ -d "$g" ] || continue
        rmdir "/sys/fs/cgroup/cpu/novalab/$(basename "$g")" "/sys/fs/cgroup/novalab/$(basename "$g")" \
            2>/dev/null || true
    done
}

wait_gone() {   # wait_gone SECONDS PID... : 0 once none is alive
    local limit
    limit=$(( $1 * 5 )); shift
    local i p alive
    for ((i = 0; i < limit; i++)); do
        alive=0
        for p in "$@"; do
            # a process group is gone when kill -0 on it fails
            if kill -0 -- "-$p" 2>/dev/null || kill -0 "$p" 2>/dev/null; then alive=1; fi
        done
        [ "$alive" = 0 ] && return 0
        sleep 0.2
    done
    return 1
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --------------------------------------------------------------- configuration
# keystonemiddleware (and keystoneauth) options of the lab's service user
authtoken_section() {
    echo "[keystone_authtoken]"
    echo "www_authenticate_uri = $KEYSTONE"
    service_auth_options
}

service_auth() {   # service_auth SECTION: keystoneauth password options
    echo "[$1]"
    service_auth_options
}

service_auth_options() {   # the lab's service user, keystoneauth password
    cat <<EOF
auth_type = password
auth_url = $KEYSTONE
username = $KS_USER
password = $KS_PASSWORD
project_name = $KS_PROJECT
user_domain_id = default
project_domain_id = default
EOF
}

write_configs() {
    mkdir -p "$LAB"/{etc/nova,etc/placement,etc/glance,data/glance/{images,staging,tasks},logs,state/lock,lib,run,guests}
    cp "$HERE"/lib/*.py "$LAB/lib/"
    local site
    site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    cmp -s "$HERE/lib/novalab_fake.py" "$site/nova/virt/novalab_fake.py" \
        || cp "$HERE/lib/novalab_fake.py" "$site/nova/virt/novalab_fake.py"

    cat > "$LAB/etc/my.cnf" <<EOF
[mysqld]
datadir = $LAB/mysql
socket = $LAB/run/mysql.sock
pid-file = $LAB/state/mysqld.pid
bind-address = 127.0.0.1
port = $P_DB
user = root
skip-name-resolve
skip-log-bin
innodb_buffer_pool_size = 64M
innodb_log_file_size = 16M
innodb_flush_log_at_trx_commit = 0
innodb_doublewrite = 0
performance_schema = OFF
max_connections = 500
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
log-error = $LAB/logs/mariadb.log
EOF

    cat > "$LAB/etc/placement/placement.conf" <<EOF
[DEFAULT]
log_dir = $LAB/logs
log_file = placement-api.log

[api]
auth_strategy = noauth2

[placement_database]
connection = $(dburl placement)

[placement]
# The default (10) retries inside the request's transaction, on a stale
# snapshot, and lets concurrent boots over-fill a host; with 1 the conflict
# goes back to nova-scheduler, which retries with fresh data.
allocation_conflict_retry_count = 1
EOF

    cp "$VENV/etc/glance/glance-api-paste.ini" "$LAB/etc/glance/"
    if [ -n "$KEYSTONE" ]; then
        : > "$LAB/etc/glance/policy.yaml"          # Glance's own defaults
    else   # no Keystone: an unauthenticated context may do everything
        echo '"context_is_admin": ""' > "$LAB/etc/glance/policy.yaml"
    fi
    cat > "$LAB/etc/glance/glance-api.conf" <<EOF
[DEFAULT]
log_dir = $LAB/logs
log_file = glance-api.log
enabled_backends = fs:file

[database]
connection = $(dburl glance)

[glance_store]
default_backend = fs

[fs]
filesystem_store_datadir = $LAB/data/glance/images/

[os_glance_staging_store]
filesystem_store_datadir = $LAB/data/glance/staging/

[os_glance_tasks_store]
filesystem_store_datadir = $LAB/data/glance/tasks/

[paste_deploy]
config_file = $LAB/etc/glance/glance-api-paste.ini
$([ -n "$KEYSTONE" ] && echo "flavor = keystone")

[oslo_policy]
policy_file = $LAB/etc/glance/policy.yaml
EOF
    if [ -n "$KEYSTONE" ]; then
        authtoken_section >> "$LAB/etc/glance/glance-api.conf"
        authtoken_section > "$LAB/etc/neutron.conf"     # the Neutron stand-in's
    fi

    if [ -n "$KEYSTONE" ]; then
        cp "$VENV/etc/nova/api-paste.ini" "$LAB/etc/nova/api-paste.ini"
    else
        sed -e 's/ authtoken keystonecontext / noauth keystonecontext /' \
            "$VENV/etc/nova/api-paste.ini" > "$LAB/etc/nova/api-paste.ini"
        printf '\n[filter:noauth]\npaste.filter_factory = novalab_noauth:filter_factory\n' \
            >> "$LAB/etc/nova/api-paste.ini"
    fi

    cat > "$LAB/etc/nova/nova.conf" <<EOF
[DEFAULT]
log_dir = $LAB/logs
state_path = $LAB/state
transport_url = $RABBIT
compute_driver = novalab_fake.ConfigurableFakeDriver
my_ip = 127.0.0.1
heal_instance_info_cache_interval = -1
cpu_allocation_ratio = 1.0
ram_allocation_ratio = 1.0
disk_allocation_ratio = 1.0
reserved_host_memory_mb = 0
report_interval = 2
graceful_shutdown_timeout = 3

[api_database]
connection = $(dburl nova_api)

[database]
connection = $(dburl nova)

[conductor]
workers = 1

[scheduler]
workers = 1
discover_hosts_in_cells_interval = -1

[quota]
instances = 1000
cores = 100000
ram = 100000000

[glance]
endpoint_override = http://127.0.0.1:$P_GLANCE

$(if [ -n "$KEYSTONE" ]; then service_auth neutron; else printf '%s\n' "[neutron]" \
    "auth_type = admin_token" "endpoint = http://127.0.0.1:$P_NEUTRON" "token = admin:admin"; fi)
endpoint_override = http://127.0.0.1:$P_NEUTRON

[placement]
auth_type = admin_token
endpoint = http://127.0.0.1:$P_PLACEMENT
token = admin:admin
endpoint_override = http://127.0.0.1:$P_PLACEMENT

[oslo_concurrency]
lock_path = $LAB/state/lock

[vnc]
enabled = False

[wsgi]
api_paste_config = $LAB/etc/nova/api-paste.ini
EOF
    if [ -n "$KEYSTONE" ]; then
        # Nova sends its own token beside the user's to Neutron and Glance
        {
            authtoken_section
            service_auth keystone
            service_auth service_user
            echo "send_service_user_token = true"
        } >> "$LAB/etc/nova/nova.conf"
    fi

    local h
    for h in $COMPUTES; do
        mkdir -p "$LAB/state/$h"
        cat > "$LAB/etc/nova/$h.conf" <<EOF
[DEFAULT]
host = $h
state_path = $LAB/state/$h
log_file = nova-compute-$h.log

[fake_host]
vcpus = $HOST_VCPUS
memory_mb = $HOST_RAM
local_gb = $HOST_DISK
guest_dir = $LAB/guests
guest_command = $([ -n "$GUEST_PYTHON" ] && echo "$GUEST_PYTHON $LAB/lib/novalab_guest.py")
EOF
    done
}

# --------------------------------------------------------------- database
start_mariadb() {
    svc_start mariadb mariadbd --defaults-file="$LAB/etc/my.cnf"
    local i
    for ((i = 0; i < 300; i++)); do
        mysql_cli -e 'select 1' >/dev/null 2>&1 && return 0
        kill -0 "$(cat "$LAB/run/mariadb.pid")" 2>/dev/null || break
        sleep 0.2
    done
    tail -20 "$LAB/logs/mariadb.log" >&2 || true
    die "MariaDB did not start"
}

# The synced databases depend only on the package versions and
# build_databases (bump DB_LAYOUT when changing it or my.cnf): they are built
# once into the cache and copied for every start. The port in the cell
# mappings is set at each start, so a template serves every port offset (the
# key still names 13306, the port it was once part of).
DB_LAYOUT=1
db_template_key() {
    {
        "$VENV/bin/pip" freeze 2>/dev/null | grep -Ei '^(nova|openstack-placement|glance)=='
        echo "13306 $DB_LAYOUT"
    } | sha256sum | cut -c1-12
}

build_databases() {
    mariadb-install-db --defaults-file="$LAB/etc/my.cnf" --auth-root-authentication-method=normal \
        --skip-test-db > "$LAB/logs/mariadb-install.log" 2>&1
    start_mariadb
    mysql_cli -e "
        CREATE DATABASE nova_api; CREATE DATABASE nova; CREATE DATABASE nova_cell0;
        CREATE DATABASE placement; CREATE DATABASE glance;
        CREATE USER 'os'@'127.0.0.1' IDENTIFIED BY 'os'; GRANT ALL ON *.* TO 'os'@'127.0.0.1';"
    local nm="$VENV/bin/nova-manage --config-file $LAB/etc/nova/nova.conf"
    "$VENV/bin/placement-manage" --config-file "$LAB/etc/placement/placement.conf" db sync \
        > "$LAB/logs/placement-manage.out" 2>&1 &
    local p1=$!
    "$VENV/bin/glance-manage" --config-file "$LAB/etc/glance/glance-api.conf" db_sync \
        > "$LAB/logs/glance-manage.out" 2>&1 &
    local p2=$!
    { $nm api_db sync && $nm cell_v2 map_cell0 --database_connection "$(dburl nova_cell0)" \
      && $nm cell_v2 create_cell --name cell1 && $nm db sync; } > "$LAB/logs/nova-manage.out" 2>&1 \
        || die "nova database sync failed (see $LAB/logs/nova-manage.out)"
    wait $p1 || die "placement db sync failed"
    wait $p2 || die "glance db sync failed"
}

template_dir() { echo "$CACHE/nova-lab-db-$(db_template_key)"; }

prepare_databases() {
    local template
    template=$(template_dir)
    if [ -f "$template/.complete" ]; then
        cp -a "$template/mysql" "$LAB/mysql"
        start_mariadb
        step "databases copied from $template"
    else
        build_databases
        step "databases created and synced"
        # a clean shutdown gives a consistent copy for the next start
        kill -TERM "$(cat "$LAB/run/mariadb.pid")"
        wait_gone 60 "$(cat "$LAB/run/mariadb.pid")" || die "MariaDB did not stop"
        rm -f "$LAB/run/mariadb.pid"
        rm -rf "$CACHE"/nova-lab-db-*   # templates of other versions
        mkdir -p "$template.tmp"
        cp -a "$LAB/mysql" "$template.tmp/mysql" && touch "$template.tmp/.complete"
        rm -rf "$template" && mv "$template.tmp" "$template"
        start_mariadb
        step "database template saved in $template"
    fi
    # cell1 talks over this run's transport URL
    # and every cell reaches this run's database port
    mysql_cli -e "UPDATE nova_api.cell_mappings SET transport_url='$RABBIT' WHERE name='cell1';
        UPDATE nova_api.cell_mappings SET database_connection =
        REGEXP_REPLACE(database_connection, '@127.0.0.1:[0-9]+/', '@127.0.0.1:$P_DB/')"
}

# --------------------------------------------------------------- commands
ready() {
    "$VENV/bin/python" "$LAB/lib/novalab_ready.py" --phase "$1" --timeout 180 \
        --nova "http://127.0.0.1:$P_NOVA/v2.1" --glance "http://127.0.0.1:$P_GLANCE" \
        --placement "http://127.0.0.1:$P_PLACEMENT" --neutron "http://127.0.0.1:$P_NEUTRON" \
        --since "$SINCE" --computes "$COMPUTES" $(for f in $FLAVORS; do echo --flavor "$f"; done) \
        ${KEYSTONE:+--keystone "$KEYSTONE" --user "$KS_USER" --project "$KS_PROJECT"}
}

start() {
    [ -x "$VENV/bin/nova-compute" ] || die "not installed: run tools/nova-lab/install.sh"
    command -v mariadbd >/dev/null || die "not installed: run tools/nova-lab/install.sh"
    svc_stop_all
    local port
    for port in $P_NOVA $P_PLACEMENT $P_GLANCE $P_NEUTRON $P_DB; do
        port_free "$port" || die "port $port is in use (another lab? set NOVA_LAB_PORT_OFFSET)"
    done
    rm -rf "$LAB"
    write_configs
    step "configuration written to $LAB"
    prepare_databases

    SINCE=$(date -u +%Y-%m-%dT%H:%M:%S)
    # clients poll: idle connections stay open (a close racing a reused
    # connection drops the request), and a loaded machine is no dead worker
    local g="gunicorn --no-control-socket --workers 1 --threads 8 --graceful-timeout 3 --keep-alive 75 --timeout 300"
    svc_start placement-api $g --bind 127.0.0.1:$P_PLACEMENT --name placement-api placement.wsgi.api:application
    svc_start glance-api $g --bind 127.0.0.1:$P_GLANCE --name glance-api glance.wsgi.api:application
    svc_start fake-neutron $g --bind 127.0.0.1:$P_NEUTRON --name fake-neutron fake_neutron:application
    svc_start nova-api $g --bind 127.0.0.1:$P_NOVA --name nova-api novalab_nova_api:application
    svc_start nova-conductor nova-conductor --config-file etc/nova/nova.conf
    svc_start nova-scheduler nova-scheduler --config-file etc/nova/nova.conf
    local h
    for h in $COMPUTES; do
        svc_start "nova-compute-$h" nova-compute --config-file etc/nova/nova.conf --config-file "etc/nova/$h.conf"
    done
    ready services || { status >&2; die "services did not answer (logs in $LAB/logs)"; }
    step "APIs answer"
    ready seed || die "seeding image/flavours failed"
    step "image and flavours created"
    ready computes || { status >&2; die "nova-compute did not come up (logs in $LAB/logs)"; }
    "$VENV/bin/nova-manage" --config-file "$LAB/etc/nova/nova.conf" cell_v2 discover_hosts \
        >> "$LAB/logs/nova-manage.out" 2>&1
    step "computes up, hosts mapped: lab ready (nova http://127.0.0.1:$P_NOVA/v2.1)"
}

prepare() {   # the template only, in a throwaway lab directory
    [ -f "$(template_dir)/.complete" ] && { step "database template present"; return 0; }
    port_free "$P_DB" || die "port $P_DB is in use"
    LAB=$(mktemp -d "${TMPDIR:-/tmp}/nova-lab-prepare.XXXXXX")
    trap 'svc_stop_all; rm -rf "$LAB"' EXIT
    write_configs
    prepare_databases
}

status() {
    local f
    for f in "$LAB"/run/*.pid; do
        [ -e "$f" ] || { echo "nova-lab: not running"; return 0; }
        local p
        p=$(cat "$f")
        if kill -0 "$p" 2>/dev/null; then echo "$(basename "$f" .pid) $p running"
        else echo "$(basename "$f" .pid) $p dead"; fi
    done
    for f in "$LAB"/guests/*/node/cassandra.pid; do
        [ -e "$f" ] || continue
        local g
        g=$(basename "$(dirname "$(dirname "$f")")")
        if grep -q CassandraDaemon "/proc/$(cat "$f")/cmdline" 2>/dev/null; then
            echo "guest-$g $(cat "$f") running"
        else
            echo "guest-$g $(cat "$f") stopped"
        fi
    done
}

case ${1:-} in
    prepare) prepare ;;
    start) start ;;
    stop) svc_stop_all; step "stopped" ;;
    status) status ;;
    *) sed -n '2,34p' "$0"; exit 2 ;;
esac
