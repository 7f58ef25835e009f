#!/usr/bin/env bash
# Re-resolve the requirements in a scratch virtualenv and rewrite
# upper-constraints.txt from it. Run after changing requirements.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
python3 -m venv "$SCRATCH/venv"
"$SCRATCH/venv/bin/pip" install -q --upgrade pip
"$SCRATCH/venv/bin/pip" install -q -r "$REPO/requirements.txt" \
    -r "$REPO/test-requirements.txt"
{
    sed -n '1,3p' "$REPO/upper-constraints.txt"
    "$SCRATCH/venv/bin/pip" freeze --exclude-editable | grep -v '^pkg_resources'
} > "$SCRATCH/uc.txt"
mv "$SCRATCH/uc.txt" "$REPO/upper-constraints.txt"
echo "upper-constraints.txt refreshed"
