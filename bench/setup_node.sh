#!/usr/bin/env bash
# Installs Pi's npm package, pinned, into bench/node_modules for the Pi baseline (bench/pi_load.mjs).
# Idempotent: returns at once when the pinned version is already there. Exit 3: node/npm missing or too old.
set -euo pipefail

PI_VERSION="0.73.1"
PI_PACKAGE="@mariozechner/pi-coding-agent"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
installed="$here/node_modules/$PI_PACKAGE/package.json"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "setup_node.sh: node and npm are needed for the Pi baseline; install Node.js >= 20.6" >&2
    exit 3
fi

# The package's engines field asks for node >= 20.6.0.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)'; then
    echo "setup_node.sh: node $(node --version) is too old; $PI_PACKAGE needs >= 20.6" >&2
    exit 3
fi

installed_version() {
    [ -f "$installed" ] && node -e 'console.log(require(process.argv[1]).version)' "$installed" 2>/dev/null || true
}

if [ "$(installed_version)" = "$PI_VERSION" ]; then
    echo "setup_node.sh: $PI_PACKAGE@$PI_VERSION already in bench/node_modules" >&2
    exit 0
fi

echo "setup_node.sh: installing $PI_PACKAGE@$PI_VERSION into bench/node_modules" >&2
# --no-save/--no-package-lock: bench/ keeps no package.json; the version is pinned here instead.
npm install --prefix "$here" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "$PI_PACKAGE@$PI_VERSION" >&2

if [ "$(installed_version)" != "$PI_VERSION" ]; then
    echo "setup_node.sh: install finished but $installed does not report $PI_VERSION" >&2
    exit 1
fi
echo "setup_node.sh: done" >&2
