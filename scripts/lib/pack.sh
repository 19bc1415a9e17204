# Sourced by scripts/check-package.sh and scripts/check-newcomer.sh: what both need to install this
# package as a user does, from a tarball and npm's cache.

# pack_package DEST: runs `npm pack` (which runs `prepack`, i.e. the build) into DEST and prints the
# tarball's path.
pack_package() {
  local name
  name="$(cd "$repo" && npm pack --silent --pack-destination "$1" | tail -n 1)"
  test -f "$1/$name"
  printf '%s\n' "$1/$name"
}

# repo_version NAME: the version of NAME the repository is developed against, so that an install of
# that version is served from npm's cache.
repo_version() { (cd "$repo" && node -p "require('$1/package.json').version"); }
