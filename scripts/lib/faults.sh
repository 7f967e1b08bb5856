# Shared by scripts/faults, scripts/ha and scripts/soak (sourced, not run): what they install,
# the daemon they build, and the work directory their processes are found by.

source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"
source "$(dirname "${BASH_SOURCE[0]}")/libcrypto.sh"

# faults_install [COMMAND=PACKAGE[,PACKAGE…]]…: PostgreSQL, libcrypto, HAProxy (every script
# puts the two instances behind it), and the packages of each named command that is missing.
faults_install() {
    pg_ensure_installed
    libcrypto_ensure_installed
    local missing=() pair packages
    for pair in haproxy=haproxy "$@"; do
        packages="${pair#*=}"
        # shellcheck disable=SC2206  # one word per package
        command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=(${packages//,/ })
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "==> installing ${missing[*]}" >&2
        local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# Builds the daemon (FAULTS_BUILD: debug, the default, or release) and exports FAULTS_BIN,
# its directory, and FAULTS_PG_BIN, PostgreSQL's.
faults_build() {
    local configuration="${FAULTS_BUILD:-debug}"
    echo "==> building ($configuration)"
    swift build -c "$configuration" --product portcullis
    FAULTS_BIN="$(swift build -c "$configuration" --show-bin-path)"
    FAULTS_PG_BIN="$(pg_find_bin)"
    export FAULTS_BIN FAULTS_PG_BIN
}

# faults_work NAME: a fresh work directory, exported as FAULTS_WORK, with a master key and the
# ports of the two instances and their proxy (FAULTS_PORT_A, _B, _PROXY).
faults_work() {
    FAULTS_WORK="$(mktemp -d "/tmp/portcullis-$1.XXXXXX")"
    chmod 755 "$FAULTS_WORK"
    head -c 32 /dev/urandom >"$FAULTS_WORK/master.key"
    FAULTS_PORT_A="$(pg_free_port)"; FAULTS_PORT_B="$(pg_free_port)"; FAULTS_PORT_PROXY="$(pg_free_port)"
    export FAULTS_WORK FAULTS_PORT_A FAULTS_PORT_B FAULTS_PORT_PROXY
}

# Stops the instances and HAProxy of the work directory (their command lines name it).
faults_stop_instances() {
    pkill -f "$FAULTS_WORK/portcullis-serve" 2>/dev/null || true
    pkill -f "$FAULTS_WORK/haproxy.cfg" 2>/dev/null || true
}
