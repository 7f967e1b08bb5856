# Shared PostgreSQL helpers for scripts/dev and scripts/test (sourced, not run).
#
# initdb and pg_ctl refuse to run as root, so when we are root the cluster
# directory is owned by the `postgres` user and the server runs as it.

pg_find_bin() {
    local candidate
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v initdb)")"
        return 0
    fi
    for candidate in /usr/lib/postgresql/*/bin; do
        if [ -x "$candidate/initdb" ]; then echo "$candidate"; return 0; fi
    done
    return 1
}

# Installs PostgreSQL from Debian's packages when initdb is missing.
pg_ensure_installed() {
    if pg_find_bin >/dev/null; then return 0; fi
    echo "==> installing PostgreSQL (initdb not found)" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql postgresql-contrib >/dev/null
    pg_find_bin >/dev/null || { echo "PostgreSQL installation failed" >&2; return 1; }
}

# Runs a PostgreSQL tool as the cluster owner.
pg_as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# pg_own_dir DIR — creates DIR for the cluster owner (the `postgres` user, when we are root).
pg_own_dir() {
    local dir="$1"
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
        chown -R postgres: "$dir"
        # The owner must be able to reach the directory.
        local parent="$dir"
        while parent="$(dirname "$parent")" && [ "$parent" != "/" ]; do
            chmod o+x "$parent" 2>/dev/null || true
        done
    fi
}

# pg_start DIR PORT [extra postgres options] — starts the cluster in DIR/data.
pg_start() {
    local dir="$1" port="$2" extra="${3:-}"
    pg_as_owner "$(pg_find_bin)/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='$dir' -c max_connections=1000 $extra" \
        start >/dev/null || { cat "$dir/postgres.log" >&2; return 1; }
}

# pg_start_cluster DIR PORT [extra postgres options]
# Creates DIR/data on first use (role `portcullis`, trust auth on loopback) and starts it.
pg_start_cluster() {
    local dir="$1" port="$2" extra="${3:-}" bin
    bin="$(pg_find_bin)"
    pg_own_dir "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        pg_as_owner "$bin/initdb" -D "$dir/data" -U portcullis --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; return 1; }
    fi
    pg_start "$dir" "$port" "$extra"
}

# pg_start_standby DIR PORT PRIMARY_PORT — a streaming standby of the cluster on PRIMARY_PORT,
# copied with pg_basebackup on first use (`-R`: it follows the primary), and started.
pg_start_standby() {
    local dir="$1" port="$2" primary="$3" bin
    bin="$(pg_find_bin)"
    pg_own_dir "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        pg_as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary" -U portcullis -D "$dir/data" -X stream -R -c fast \
            >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; return 1; }
    fi
    pg_start "$dir" "$port"
}

# pg_require_sync_standby PORT — the primary on PORT acknowledges a COMMIT only once a standby
# has it (`synchronous_standby_names = '*'`); waits until one is streaming synchronously.
pg_require_sync_standby() {
    local port="$1" bin tries=0
    bin="$(pg_find_bin)"
    "$bin/psql" -h 127.0.0.1 -p "$port" -U portcullis -d postgres -qAt \
        -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
    until [ "$("$bin/psql" -h 127.0.0.1 -p "$port" -U portcullis -d postgres -qAt \
        -c "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 ]; do
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || { echo "no synchronous standby on port $port" >&2; return 1; }
        sleep 0.1
    done
}

# pg_promote DIR — the standby in DIR becomes a primary.
pg_promote() {
    pg_as_owner "$(pg_find_bin)/pg_ctl" -D "$1/data" -w -t 60 promote >/dev/null
}

pg_stop_cluster() {
    local dir="$1" bin
    bin="$(pg_find_bin)" || return 0
    [ -f "$dir/data/postmaster.pid" ] || return 0
    pg_as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

# pg_create_database PORT NAME — idempotent.
pg_create_database() {
    local port="$1" name="$2" bin
    bin="$(pg_find_bin)"
    if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U portcullis -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
        "$bin/createdb" -h 127.0.0.1 -p "$port" -U portcullis "$name"
    fi
}
