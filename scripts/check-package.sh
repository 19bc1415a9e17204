#!/usr/bin/env bash
# Packaging check: what a user gets from `npm install express-service-accounts`.
#
# Packs the package (npm pack runs `prepack`, i.e. the build), installs the tarball with express,
# better-sqlite3 and vitest into a temporary project outside the repository, and there:
#   1. require()s the CommonJS entry points and import()s the ES module ones, each followed by a real
#      token round trip over HTTP (memory store from CJS, SQLite store from ESM);
#   2. type-checks a TypeScript consumer (createServiceAccounts, requireBearer, the typed
#      req.serviceAccount, a custom AccountStore class, the /sql types) and a /testing consumer given
#      vitest's functions, each as an ES module and as CommonJS under "module": "nodenext", and under
#      "moduleResolution": "bundler";
#   3. runs the AccountStore contract suite of /testing with vitest against MemoryAccountStore, once
#      from its ES module build (vitest's functions passed) and once from its CommonJS build
#      (require()d, on vitest's globals as under Jest), and checks that the build imports no vitest;
#   4. runs the bin: `npx service-accounts --help`, then create and list on a temporary SQLite file.
#
# Slow (the temporary project compiles better-sqlite3), so `.ci/run` runs it, not `npm test`.
# Usage: bash scripts/check-package.sh   (env KEEP_PACKAGE_CHECK=1 keeps the temporary project)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixtures="$repo/scripts/package-consumer"
work="$(mktemp -d "${TMPDIR:-/tmp}/esa-package-check.XXXXXX")"
if [[ "${KEEP_PACKAGE_CHECK:-}" == "1" ]]; then
  echo "package check: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi

step() { printf '\n== package check: %s\n' "$*"; }
# pack_package, repo_version
source "$repo/scripts/lib/pack.sh"

step "npm pack"
tarball="$(pack_package "$work")"
tarball_name="$(basename "$tarball")"
tar -tzf "$tarball" | sort > "$work/contents.txt"
for required in package/package.json package/README.md package/LICENSE package/CHANGELOG.md \
  package/dist/index.js package/dist/index.mjs package/dist/index.d.ts package/dist/index.d.mts \
  package/dist/sql/index.js package/dist/sql/index.mjs package/dist/sql/index.d.ts package/dist/sql/index.d.mts \
  package/dist/testing/index.js package/dist/testing/index.mjs package/dist/testing/index.d.ts \
  package/dist/testing/index.d.mts package/dist/cli/main.cjs \
  package/examples/custom-store/redis-account-store.ts; do
  grep -qx "$required" "$work/contents.txt" || { echo "missing from the tarball: $required" >&2; exit 1; }
done
# The one example shipped: the store template docs/writing-a-store.md sends tarball users to.
if grep -E '^package/(src|test|examples|bench|docs|scripts)/' "$work/contents.txt" | grep -vx 'package/examples/custom-store/redis-account-store.ts'; then
  echo "the tarball holds files that are not meant to be published (above)" >&2
  exit 1
fi
echo "$(wc -l < "$work/contents.txt") files in $tarball_name"

step "install into a temporary project"
project="$work/project"
mkdir -p "$project"
cat > "$project/package.json" <<'JSON'
{ "name": "esa-package-check", "version": "0.0.0", "private": true, "type": "commonjs" }
JSON
(
  cd "$project"
  npm install --prefer-offline --no-audit --no-fund --loglevel=error \
    "$tarball" \
    "express@$(repo_version express)" \
    "better-sqlite3@$(repo_version better-sqlite3)" \
    "vitest@$(repo_version vitest)" \
    "typescript@$(repo_version typescript)" \
    "@types/express@$(repo_version @types/express)" \
    "@types/node@$(repo_version @types/node)"
)

step "require() and import"
cp "$fixtures/smoke.cjs" "$fixtures/smoke.mjs" "$project/"
(cd "$project" && node smoke.cjs && node smoke.mjs)

step "type-check a TypeScript consumer"
mkdir -p "$project/types"
cp "$fixtures/consumer.ts" "$project/types/consumer-esm.mts"
cp "$fixtures/consumer.ts" "$project/types/consumer-cjs.cts"
cp "$fixtures/consumer-testing.ts" "$project/types/consumer-testing.mts"
cp "$fixtures/consumer-testing.ts" "$project/types/consumer-testing.cts"
cat > "$project/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "types": ["node"],
    "strict": true,
    "esModuleInterop": true,
    "skipLibCheck": false,
    "noEmit": true
  },
  "include": ["types"]
}
JSON
cat > "$project/tsconfig.bundler.json" <<'JSON'
{
  "extends": "./tsconfig.json",
  "compilerOptions": { "module": "preserve", "moduleResolution": "bundler" },
  "include": ["types/consumer-esm.mts", "types/consumer-testing.mts"]
}
JSON
(cd "$project" && npx --no-install tsc -p tsconfig.json && npx --no-install tsc -p tsconfig.bundler.json)
echo "types: ok (nodenext ESM + CJS, bundler)"

step "the AccountStore contract suite, run by vitest from the installed tarball"
# The suite takes the test functions it is given: neither build may load a test framework itself
# (a require() of vitest throws, which is what kept ./testing ESM-only before).
if grep -nE "^import .*['\"]vitest['\"/]|(require|import)\(['\"]vitest['\"/]" \
  "$project"/node_modules/express-service-accounts/dist/testing/*.js \
  "$project"/node_modules/express-service-accounts/dist/testing/*.mjs; then
  echo "dist/testing loads vitest (above): it must only use the functions it is given" >&2
  exit 1
fi
mkdir -p "$project/suite"
cp "$fixtures/contract-esm.test.mjs" "$fixtures/contract-cjs.test.mjs" "$project/suite/"
(
  cd "$project"
  npx --no-install vitest run suite --globals --reporter=dot --reporter=json --outputFile.json="$work/suite.json"
  node - "$work/suite.json" <<'NODE'
const assert = require('node:assert/strict');
const report = JSON.parse(require('node:fs').readFileSync(process.argv[2], 'utf8'));
assert.equal(report.numFailedTests, 0);
assert.equal(report.numPendingTests, 0, 'MemoryAccountStore has watch: no contract test may be skipped');
for (const file of ['contract-esm.test.mjs', 'contract-cjs.test.mjs']) {
  const result = report.testResults.find((r) => r.name.endsWith(`/suite/${file}`));
  assert.ok(result, `${file} ran`);
  const passed = result.assertionResults.filter((t) => t.status === 'passed');
  assert.ok(passed.length >= 16, `${file}: ${passed.length} contract tests passed, expected at least 16`);
  assert.ok(passed.every((t) => t.fullName.includes('(AccountStore contract)')), `${file}: only contract tests`);
  console.log(`${file}: ${passed.length} contract tests passed`);
}
NODE
)
echo "contract suite: ok (ESM with vitest's functions, CJS on the globals)"

step "the service-accounts bin"
db="$work/cli/accounts.db"
(
  cd "$project"
  npx --no-install service-accounts --help > "$work/help.txt"
  grep -q "create" "$work/help.txt" || { echo "--help does not mention create" >&2; exit 1; }
  npx --no-install service-accounts --store "sqlite:$db" --json create --name package-check --scope "jobs:write" > "$work/created.json"
  npx --no-install service-accounts --store "sqlite:$db" --json list > "$work/list.json"
  node - "$work/created.json" "$work/list.json" <<'NODE'
const assert = require('node:assert/strict');
const fs = require('node:fs');
const created = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const listed = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
assert.equal(created.name, 'package-check');
assert.match(created.clientId, /^esa_/);
assert.match(created.secret.value, /^esas_/);
assert.deepEqual(created.scopes, ['jobs:write']);
const account = listed.find((a) => a.clientId === created.clientId);
assert.ok(account, 'list shows the created account');
assert.equal(account.secrets[0].id, created.secret.id);
const text = fs.readFileSync(process.argv[3], 'utf8');
assert.ok(!text.includes(created.secret.value), 'list never shows a secret value');
assert.ok(!text.includes('$2'), 'list never shows a hash');
NODE
)
echo "bin: ok"

step "all good"
