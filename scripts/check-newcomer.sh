#!/usr/bin/env bash
# The newcomer's path: docs/getting-started.md followed literally by a new user, in TypeScript (ES
# module, tsx and tsc) and in CommonJS JavaScript (node), in fresh projects outside the repository
# that install the packed tarball. scripts/newcomer/walk.mjs pastes the page's marked code blocks,
# runs its marked shell blocks (install, start the app, the CLI, curl, the scripts) and compares what
# they print with the outputs the page shows.
#
# No network: the install is served from npm's cache (the repository's own versions). Slow (the first
# project compiles better-sqlite3), so `.ci/run` runs it, not `npm test`.
# Usage: bash scripts/check-newcomer.sh   (or npm run test:newcomer; KEEP_NEWCOMER_CHECK=1 keeps the projects)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/esa-newcomer.XXXXXX")"
if [[ "${KEEP_NEWCOMER_CHECK:-}" == "1" ]]; then
  echo "newcomer check: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
# pack_package
source "$repo/scripts/lib/pack.sh"

echo "== newcomer check: npm pack"
tarball="$(pack_package "$work")"
node "$repo/scripts/newcomer/walk.mjs" "$tarball" "$work"
