# Shared set-up for the project's scripts (sourced, not run).
# Installs missing build prerequisites on Debian/Ubuntu machines.

# Debian packages the build needs. The emulation core and the CLI need none beyond a C linker;
# the desktop frontend's audio and gamepad crates will add theirs here.
# make: the vendored LuaJIT (nes-lua, through mlua) is built with it.
REQUIRED_DEBIAN_PACKAGES=(gcc make)

apt_install_missing() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing missing system packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

ensure_build_tools() {
  if command -v dpkg-query >/dev/null 2>&1; then
    apt_install_missing "${REQUIRED_DEBIAN_PACKAGES[@]}"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: install Rust with rustup (https://rustup.rs) and re-run." >&2
    exit 1
  fi
  if command -v rustup >/dev/null 2>&1; then
    rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
    rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
  fi
}
