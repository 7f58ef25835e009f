#!/usr/bin/env bash
# Build elastman's YCSB driver (YCSB core + our Cassandra binding) and copy
# its runtime classpath into the cache. Idempotent: rebuilds only when the
# pom or the sources changed.
#
#   tools/ycsb/install.sh            -> $ELASTMAN_CACHE/ycsb/lib/*.jar
#
# Environment: ELASTMAN_CACHE (default ~/.cache/elastman)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${ELASTMAN_CACHE:-$HOME/.cache/elastman}
DEST=$CACHE/ycsb
LIB=$DEST/lib
STAMP=$DEST/.complete

log() { echo "[ycsb] $*"; }

HASH=$(cd "$HERE" && find pom.xml src -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$HASH" ] && ls "$LIB"/elastman-ycsb-*.jar >/dev/null 2>&1; then
    log "YCSB driver up to date in $LIB"
    exit 0
fi
command -v mvn >/dev/null || { echo "ycsb/install.sh: maven (mvn) is required" >&2; exit 1; }

BUILD=$(mktemp -d "${TMPDIR:-/tmp}/elastman-ycsb-build.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT
cp -r "$HERE/pom.xml" "$HERE/src" "$BUILD/"
log "building the binding and copying YCSB $(sed -n 's:.*<ycsb.version>\(.*\)</ycsb.version>.*:\1:p' "$HERE/pom.xml") into $LIB"
mvn -q -B -f "$BUILD/pom.xml" package dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$BUILD/lib"
rm -rf "$LIB.new"
mkdir -p "$LIB.new"
cp "$BUILD"/lib/*.jar "$LIB.new/"
cp "$BUILD"/target/elastman-ycsb-*.jar "$LIB.new/"
rm -rf "$LIB"
mv "$LIB.new" "$LIB"
echo "$HASH" > "$STAMP"
log "done: $(ls "$LIB" | wc -l) jars"
