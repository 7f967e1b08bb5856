# OpenSSL's libcrypto for scripts/test, scripts/bench and scripts/dev (sourced, not run).

# Installs libssl-dev (OpenSSL 3's headers and libcrypto.so) and pkg-config from
# Debian's packages when pkg-config cannot find libcrypto: the package's CLibCrypto
# target needs both before any `swift build`.
libcrypto_ensure_installed() {
    if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libcrypto; then return 0; fi
    echo "==> installing libssl-dev and pkg-config (pkg-config finds no libcrypto)" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libssl-dev pkg-config >/dev/null
    pkg-config --exists libcrypto || { echo "libssl-dev installation failed: pkg-config finds no libcrypto" >&2; return 1; }
}
