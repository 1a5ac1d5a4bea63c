# Shared set-up for the project's scripts (sourced, not run).
# Installs missing build prerequisites on Debian/Ubuntu machines.

# Debian packages the build needs: a C toolchain (make too: the vendored LuaJIT of nes-lua is
# built with it), and for the desktop frontend pkg-config with ALSA's headers (cpal, audio) and
# libudev's (gilrs, gamepads).
REQUIRED_DEBIAN_PACKAGES=(gcc make pkg-config libasound2-dev libudev-dev)

# Libraries `nes play` loads at run time: xkbcommon (keyboard; winit cannot start without it),
# the X cursor and input extensions, and Mesa's Vulkan drivers, whose software renderer
# (lavapipe) draws the window on machines without a GPU driver.
RUNTIME_DEBIAN_PACKAGES=(libxkbcommon0 libxkbcommon-x11-0 libxcursor1 libxi6 mesa-vulkan-drivers)

# What the window tests add: a virtual X screen to open the window on.
WINDOW_TEST_DEBIAN_PACKAGES=(xvfb xauth)

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
    apt_install_missing "${REQUIRED_DEBIAN_PACKAGES[@]}" "${RUNTIME_DEBIAN_PACKAGES[@]}"
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

# For the test suite: everything above plus the virtual screen the window tests run on.
ensure_window_test_tools() {
  if command -v dpkg-query >/dev/null 2>&1; then
    apt_install_missing "${WINDOW_TEST_DEBIAN_PACKAGES[@]}"
  fi
}

# The Python package's tests (crates/python): a virtual environment in target/pyenv with the
# pinned build and test requirements. Needs CPython >= 3.9 with venv (Debian's python3-venv).
PYTHON_ENV="target/pyenv"

ensure_python_env() {
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then
    if command -v dpkg-query >/dev/null 2>&1; then
      apt_install_missing python3 python3-venv python3-pip
    fi
  fi
  if ! python3 -c "import sys; sys.exit(sys.version_info < (3, 9))"; then
    echo "python3 is $(python3 --version 2>&1); the Python package needs 3.9 or newer" >&2
    exit 1
  fi
  if [ ! -x "$PYTHON_ENV/bin/python" ]; then
    python3 -m venv "$PYTHON_ENV"
  fi
  # pip skips what is already installed at the pinned version, so reruns are quick.
  "$PYTHON_ENV/bin/python" -m pip install -q --disable-pip-version-check \
    -r crates/python/requirements-test.txt
}
