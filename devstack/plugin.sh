#!/usr/bin/env bash
# shellcheck shell=bash
# devstack plugin of elastman: installs it, configures it against devstack's
# Keystone, RabbitMQ and Nova, registers the service and its endpoint, serves
# the API under uwsgi (elastman.wsgi.api:application), starts the workers,
# and puts the libvirt hook and host agent on compute hosts.
#
# Functions take their values from devstack/settings (sourced by devstack
# before this file) and from devstack's own functions; each phase below calls
# them in order.

ELASTMAN_BIN_DIR=${ELASTMAN_BIN_DIR:-$(get_python_exec_prefix)}

# install_elastman: the package, uwsgi for the API, and libvirt-python
# where the agent runs.
function install_elastman {
    setup_develop "$ELASTMAN_DIR"
    if is_service_enabled elastman-api; then
        install_apache_uwsgi
    fi
    if is_service_enabled elastman-hostagent; then
        pip_install "libvirt-python>=9.0"
    fi
}

# configure_elastman: elastman.conf, policy, the keystone_authtoken section.
function configure_elastman {
    sudo install -d -o "$STACK_USER" "$ELASTMAN_CONF_DIR" \
        "$ELASTMAN_STATE_PATH" "$ELASTMAN_AUTH_CACHE_DIR"
    rm -f "$ELASTMAN_CONF"
    touch "$ELASTMAN_CONF"
    iniset "$ELASTMAN_CONF" DEFAULT debug "$ENABLE_DEBUG_LOG_LEVEL"
    iniset "$ELASTMAN_CONF" DEFAULT state_path "$ELASTMAN_STATE_PATH"
    iniset "$ELASTMAN_CONF" DEFAULT host "$(hostname)"
    iniset_rpc_backend elastman "$ELASTMAN_CONF"

    iniset "$ELASTMAN_CONF" api auth_strategy keystone
    configure_keystone_authtoken_middleware "$ELASTMAN_CONF" elastman
    iniset "$ELASTMAN_CONF" keystone_authtoken cache_dir \
        "$ELASTMAN_AUTH_CACHE_DIR"

    cp "$ELASTMAN_DIR/etc/elastman/policy.yaml.sample" "$ELASTMAN_POLICY_FILE"
    iniset "$ELASTMAN_CONF" oslo_policy policy_file "$ELASTMAN_POLICY_FILE"

    if [[ "$ELASTMAN_STORE_CONTACT_POINTS" != "local" ]]; then
        iniset "$ELASTMAN_CONF" store contact_points \
            "$ELASTMAN_STORE_CONTACT_POINTS"
    fi
    iniset "$ELASTMAN_CONF" store keyspace "$ELASTMAN_STORE_KEYSPACE"

    iniset "$ELASTMAN_CONF" actuator compute_driver "$ELASTMAN_COMPUTE_DRIVER"
    if [[ "$ELASTMAN_COMPUTE_DRIVER" == "nova" ]]; then
        configure_keystone_authtoken_middleware "$ELASTMAN_CONF" elastman nova
        iniset "$ELASTMAN_CONF" nova region_name "$REGION_NAME"
    fi
    iniset "$ELASTMAN_CONF" hostagent socket_path "$ELASTMAN_HOSTAGENT_SOCKET"

    # uwsgi serves the API on the service port itself (no Apache in front);
    # the WSGI module reads $ELASTMAN_CONF.
    write_uwsgi_config "$ELASTMAN_UWSGI_CONF" "$ELASTMAN_UWSGI" "" \
        "$ELASTMAN_SERVICE_HOST:$ELASTMAN_SERVICE_PORT" "elastman-api"
    iniset "$ELASTMAN_UWSGI_CONF" uwsgi env \
        "OS_ELASTMAN_CONFIG_FILES=$ELASTMAN_CONF"
}

# create_elastman_accounts: service user, service and endpoint in Keystone.
function create_elastman_accounts {
    create_service_user "elastman" "admin"
    local service
    service=$(get_or_create_service "elastman" "elastman" \
        "Elasticity manager for Cassandra")
    get_or_create_endpoint "$service" "$REGION_NAME" \
        "$ELASTMAN_SERVICE_PROTOCOL://$ELASTMAN_SERVICE_HOST:$ELASTMAN_SERVICE_PORT"
}

# init_elastman: the store's keyspace (and a local store node if asked).
function init_elastman {
    if [[ "$ELASTMAN_STORE_CONTACT_POINTS" == "local" ]]; then
        "$ELASTMAN_BIN_DIR/elastman-manage" --config-file "$ELASTMAN_CONF" \
            store start
    fi
    "$ELASTMAN_BIN_DIR/elastman-manage" --config-file "$ELASTMAN_CONF" \
        db sync
}

# install_elastman_hostagent: libvirt hook on a compute host.
function install_elastman_hostagent {
    if [[ "$ELASTMAN_INSTALL_LIBVIRT_HOOK" != "True" ]]; then
        return 0
    fi
    if ! is_service_enabled n-cpu; then
        sudo "$ELASTMAN_DIR/tools/install-libvirt.sh"
    fi
    sudo install -d -o "$STACK_USER" "$(dirname "$ELASTMAN_HOSTAGENT_SOCKET")"
    sudo "$PYTHON" -m elastman.hostagent.hookinstall \
        --socket "$ELASTMAN_HOSTAGENT_SOCKET"
}

# start_elastman: every enabled worker as a devstack process.
function start_elastman {
    local worker uwsgi
    if is_service_enabled elastman-api; then
        uwsgi=$(command -v uwsgi) || die "$LINENO" "uwsgi is not installed"
        run_process elastman-api \
            "$uwsgi --procname-prefix elastman-api --ini $ELASTMAN_UWSGI_CONF"
    fi
    for worker in $ELASTMAN_WORKERS; do
        run_process "elastman-$worker" \
            "$ELASTMAN_BIN_DIR/elastman-$worker --config-file $ELASTMAN_CONF"
    done
    if is_service_enabled elastman-hostagent; then
        run_process elastman-hostagent \
            "$ELASTMAN_BIN_DIR/elastman-hostagent --config-file $ELASTMAN_CONF" \
            root root
    fi
    if is_service_enabled elastman-api; then
        local url="$ELASTMAN_SERVICE_PROTOCOL://$ELASTMAN_SERVICE_HOST:$ELASTMAN_SERVICE_PORT/"
        if ! wait_for_service "$SERVICE_TIMEOUT" "$url"; then
            die "$LINENO" "elastman-api did not start at $url"
        fi
    fi
}

# stop_elastman: the processes start_elastman started.
function stop_elastman {
    local worker
    for worker in api $ELASTMAN_WORKERS hostagent; do
        stop_process "elastman-$worker"
    done
    if [[ "$ELASTMAN_STORE_CONTACT_POINTS" == "local" && -f "$ELASTMAN_CONF" ]]; then
        "$ELASTMAN_BIN_DIR/elastman-manage" --config-file "$ELASTMAN_CONF" \
            store stop || true
    fi
}

# cleanup_elastman: configuration, caches, state and the libvirt hook.
function cleanup_elastman {
    remove_uwsgi_config "$ELASTMAN_UWSGI_CONF" "elastman-api"
    sudo rm -rf "$ELASTMAN_CONF_DIR" "$ELASTMAN_AUTH_CACHE_DIR" \
        "$ELASTMAN_STATE_PATH"
    local hook
    for hook in /etc/libvirt/hooks/qemu.d/elastman /etc/libvirt/hooks/qemu; do
        if [[ -f "$hook" ]] && grep -q elastman "$hook"; then
            sudo rm -f "$hook"
        fi
    done
}

if is_service_enabled elastman-api elastman-hostagent; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing elastman"
        install_elastman
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring elastman"
        configure_elastman
        if is_service_enabled key; then
            create_elastman_accounts
        fi
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Initialising and starting elastman"
        if is_service_enabled elastman-api; then
            init_elastman
        fi
        if is_service_enabled elastman-hostagent; then
            install_elastman_hostagent
        fi
        start_elastman
    fi
    if [[ "$1" == "unstack" ]]; then
        stop_elastman
    fi
    if [[ "$1" == "clean" ]]; then
        cleanup_elastman
    fi
fi
