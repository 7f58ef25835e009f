#!/usr/bin/env bash
# Checks that tests/unit mirrors the elastman package (run by tox -e pep8).
#
# - tests/unit/<dir>/test_<name>.py must sit beside the code it tests:
#   elastman/<dir>/<name>.py or the package elastman/<dir>/<name>/ must exist.
#   A suffix names one aspect of that module: test_<name>_<aspect>.py is
#   allowed when elastman/<dir>/<name>.py exists (test_controller_seen.py
#   tests elastman/actuator/controller.py). A data file counts as a module
#   (test_openapi.py tests elastman/api/openapi.yaml).
# - every other file under tests/unit lives in a directory that exists under
#   elastman/ too (helpers such as conftest.py or synthetic.py).
# - every package directly under elastman/ has unit tests of its own, except
#   those named in NO_UNIT_TESTS with the reason.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CODE=$ROOT/elastman
TESTS=$ROOT/tests/unit

# package -> why it has no unit tests of its own
declare -A NO_UNIT_TESTS=(
    [heat]="the resource needs Heat's engine: tests/functional/api/test_heat.py drives it against a real API"
    [trainer]="the manager works on a real store (tests/functional/trainer); its models are elastman.capacity's"
)

# test file -> what it tests instead of one module
declare -A NOT_A_MODULE=(
    [test_layers.py]="the imports between elastman's packages"
    [test_devstack.py]="the devstack plugin (devstack/)"
    [hostagent/test_host.py]="the host modules together on one fake sysfs"
)

errors=0
fail() {
    echo "$1"
    errors=$((errors + 1))
}

# matches_module DIR NAME: 0 if NAME, or a prefix of it that ends before an
# underscore, is a module or package in DIR
matches_module() {
    local dir=$1 name=$2 prefix
    [ -f "$dir/$name.py" ] && return 0
    [ -d "$dir/$name" ] && [ -f "$dir/$name/__init__.py" ] && return 0
    compgen -G "$dir/$name.*" >/dev/null && return 0
    prefix=$name
    while [[ "$prefix" == *_* ]]; do
        prefix=${prefix%_*}
        [ -f "$dir/$prefix.py" ] && return 0
        [ -d "$dir/$prefix" ] && [ -f "$dir/$prefix/__init__.py" ] && return 0
    done
    return 1
}

total=0
while IFS= read -r -d '' file; do
    rel=${file#"$TESTS"/}
    reldir=$(dirname "$rel")
    [ "$reldir" = . ] && reldir=
    codedir=$CODE${reldir:+/$reldir}
    base=$(basename "$file" .py)
    total=$((total + 1))
    if [ ! -d "$codedir" ]; then
        fail "tests/unit/$rel: elastman/${reldir} does not exist"
        continue
    fi
    [ -n "${NOT_A_MODULE[$rel]:-}" ] && continue
    if [[ "$base" == test_* ]] && ! matches_module "$codedir" "${base#test_}"; then
        fail "tests/unit/$rel: no elastman/${reldir:+$reldir/}${base#test_}.py (or a module it is an aspect of) to test"
    fi
done < <(find "$TESTS" -name '*.py' -not -path '*/__pycache__/*' -print0)

for pkg in "$CODE"/*/; do
    name=$(basename "$pkg")
    [ -f "$pkg/__init__.py" ] || continue
    [ -n "${NO_UNIT_TESTS[$name]:-}" ] && continue
    if ! find "$TESTS/$name" -name 'test_*.py' 2>/dev/null | grep -q .; then
        fail "elastman/$name has no unit tests in tests/unit/$name"
    fi
done

if [ "$errors" -ne 0 ]; then
    echo "check_unit_test_structure: $errors problem(s) in $total files under tests/unit"
    exit 1
fi
echo "check_unit_test_structure: the $total files under tests/unit mirror elastman/"
