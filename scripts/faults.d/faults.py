"""Database faults under load, as scripts/faults describes; run by it, not directly.

scripts/ha.d/ha.py imports it for the same load and checks against a Patroni cluster
(FAULTS_DATABASE_URL and FAULTS_PSQL name it then).

Two daemons share one private PostgreSQL. For each fault, eight workers drive a mixed load
across both daemons (through HAProxy, configured as deploy/haproxy.cfg, for the rolling
restart) while the fault happens; every acknowledged write is recorded and
checked afterwards against the database (sign-ups, admin creates) and through the API
(each acknowledged refresh token is its session's current one, each acknowledged sign-in's
session refreshes, the last acknowledged toggle holds on both daemons, each acknowledged
password-reset email reached the tenant's webhook). Beside the workers, a prober asks
`/v1/verify` through the fault: forward auth needs no database, so it must answer 200
throughout.
"""

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

BIN = os.environ["FAULTS_BIN"]
PG_PORT = os.environ.get("FAULTS_PG_PORT", "")
PG_BIN = os.environ["FAULTS_PG_BIN"]
DATABASE_URL = os.environ.get("FAULTS_DATABASE_URL", f"postgres://portcullis@127.0.0.1:{PG_PORT}/faults")
# libpq's connection string for the checks: with several hosts, the one that takes writes.
PSQL = os.environ.get("FAULTS_PSQL", f"host=127.0.0.1 port={PG_PORT} user=portcullis dbname=faults")
WORK = os.environ["FAULTS_WORK"]
RUNS = int(os.environ["FAULTS_RUNS"])
PORTS = [int(os.environ["FAULTS_PORT_A"]), int(os.environ["FAULTS_PORT_B"])]
PROXY_PORT = int(os.environ["FAULTS_PORT_PROXY"])
DRAIN_SECONDS = 2  # listen.drain_seconds: above HAProxy's check interval (0.5 s) x fall (2)
PROJECT = "faults"
API_KEY = "faults-key"
REQUEST_TIMEOUT = 2.0  # database.request_timeout of the daemons
CLIENT_TIMEOUT = 30.0  # a request still unanswered after this long is "unanswered"
WORKERS = 8
# Seconds each worker waits between requests (scripts/soak paces its load; the faults do not).
PAUSE = float(os.environ.get("FAULTS_PAUSE", "0"))
# Every answer of each fault, written to WORK/answers-<run>-<fault>.csv (scripts/ha with HA_KEEP).
TRACE = bool(os.environ.get("FAULTS_TRACE"))
LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "postgres.sh")


def log(message):
    print(message, flush=True)


def shell(script):
    """Runs `script` in bash with scripts/lib/postgres.sh sourced."""
    subprocess.run(["bash", "-c", f"source {LIBRARY}; {script}"], check=True, stdout=subprocess.DEVNULL)


def psql(sql):
    return subprocess.run(
        [f"{PG_BIN}/psql", PSQL, "-tAc", sql],
        check=True, capture_output=True, text=True).stdout.strip()


def http(method, url, body=None, headers=None, timeout=CLIENT_TIMEOUT):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        try:
            return error.code, json.loads(error.read() or b"{}")
        except ValueError:
            return error.code, {}


class Daemon:
    def __init__(self, port, name):
        self.port, self.name = port, name
        self.base = f"http://127.0.0.1:{port}"
        self.start()

    def start(self):
        env = {
            "PORTCULLIS_PROJECT_ID": PROJECT, "PORTCULLIS_LISTEN_PORT": str(self.port),
            "PORTCULLIS_DATABASE_URL": DATABASE_URL, "PORTCULLIS_OUTBOUND_ALLOWED_PRIVATE_NETWORKS": "127.0.0.0/8",
            "PORTCULLIS_LIMITS_EMAIL_ACTIONS_PER_IP": "0",
            "PORTCULLIS_DATABASE_REQUEST_TIMEOUT": str(int(REQUEST_TIMEOUT)),
            "PORTCULLIS_API_KEYS": API_KEY, "PORTCULLIS_MASTER_KEY_FILE": f"{WORK}/master.key",
            "PORTCULLIS_LOG_LEVEL": "notice",
            # One public URL for both, as behind a proxy: it is the ID tokens' issuer, so either verifies the other's.
            "PORTCULLIS_PUBLIC_URL": f"http://127.0.0.1:{PROXY_PORT}",
            "PORTCULLIS_LIMITS_FAILED_SIGN_INS_PER_ACCOUNT": "0", "PORTCULLIS_LIMITS_FAILED_SIGN_INS_PER_IP": "0",
            "PORTCULLIS_LIMITS_SIGN_UPS_PER_IP": "0", "PORTCULLIS_LISTEN_DRAIN_SECONDS": str(DRAIN_SECONDS),
        }
        # argv[0] names the work directory, so cleanup finds strays whatever happened.
        self.process = subprocess.Popen([f"{WORK}/portcullis-serve", "serve"], executable=f"{BIN}/portcullis",
                                        env=dict(os.environ, **env), stderr=open(f"{WORK}/{self.name}.log", "a"))
        self.wait_ready()

    def wait_ready(self, limit=60):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                if http("GET", f"{self.base}/readyz", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit(f"{self.name} did not become ready; see {WORK}/{self.name}.log")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self):
        """SIGTERM, as systemctl stop sends it; returns once the daemon has drained and exited."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


class Proxy:
    """HAProxy in front of both daemons, with deploy/haproxy.cfg's settings on this run's ports."""

    def __init__(self, daemons):
        self.name, self.base = "haproxy", f"http://127.0.0.1:{PROXY_PORT}"
        with open(os.path.join(os.path.dirname(LIBRARY), "..", "..", "deploy", "haproxy.cfg")) as shipped:
            config = shipped.read().split("\n# For a tool that takes one database address")[0]
        config = (config.replace("127.0.0.1:8080", f"127.0.0.1:{PROXY_PORT}")
                  .replace("127.0.0.1:8081", f"127.0.0.1:{daemons[0].port}")
                  .replace("127.0.0.1:8082", f"127.0.0.1:{daemons[1].port}"))
        with open(f"{WORK}/haproxy.cfg", "w") as file:
            file.write(config)
        self.process = subprocess.Popen(["haproxy", "-db", "-f", f"{WORK}/haproxy.cfg"],
                                        stdout=subprocess.DEVNULL, stderr=open(f"{WORK}/haproxy.log", "a"))
        # Both servers up: rise 2 checks 500 ms apart.
        time.sleep(1.5)

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)


class Webhook:
    """The tenant's email webhook: records the address of every message delivered."""

    def __init__(self):
        received = self.received = set()
        lock = self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with lock:
                    received.add(body.get("email"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def missing(self, emails, wait=80):
        """The emails among `emails` not delivered within `wait` seconds: a message whose
        attempt died with its daemon (or whose claim a failover left unacknowledged) is claimed
        again when its lease (60 s) runs out, and the outbox is polled every 5 s."""
        deadline = time.monotonic() + wait
        while True:
            with self.lock:
                left = [email for email in emails if email not in self.received]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.5)


class Ledger:
    """What the load saw and what was acknowledged."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}
        self.slowest = 0.0
        self.late = 0
        self.signed_up = []
        self.created = []
        self.sessions = []
        self.toggle = None
        self.resets = []
        self.write_times = []
        self.last_failure = None
        self.answers = []  # (sent, answered, status, what) with FAULTS_TRACE

    def record(self, status, elapsed, write, what=""):
        now = time.monotonic()
        with self.lock:
            if TRACE:
                self.answers.append((now - elapsed, now, status, what))
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.slowest = max(self.slowest, elapsed)
            if elapsed > REQUEST_TIMEOUT + 1:
                self.late += 1
            if status != 200:
                # When the failed request was sent: one that waited out its deadline says writes
                # were unavailable when it began, not when its 503 came back.
                self.last_failure = max(self.last_failure or 0.0, now - elapsed)
            elif write:
                self.write_times.append(now)

    def writes_back(self, mark):
        """Seconds from `mark` to the first acknowledged write after the last failed request was sent."""
        with self.lock:
            if self.last_failure is None:
                return None
            after = [t for t in self.write_times if t > self.last_failure]
        return min(after) - mark if after else float("inf")

    def longest_gap(self, start, end):
        """The longest time without an acknowledged write between `start` and `end`."""
        with self.lock:
            marks = [start] + sorted(t for t in self.write_times if start <= t <= end) + [end]
        return max(later - earlier for earlier, later in zip(marks, marks[1:]))


def worker(index, daemons, ledger, tenant, admin, stop, chain):
    step = 0
    mine = []  # this worker's acknowledged sign-ups, for its password resets
    while not stop.is_set():
        step += 1
        daemon = daemons[step % 2]
        kind = step % 5
        started = time.monotonic()
        try:
            if kind == 0:
                email = f"up-{index}-{step}-{time.monotonic_ns()}@example.com"
                status, body = http("POST", f"{daemon.base}/v1/accounts:signUp?key={API_KEY}",
                                    {"email": email, "password": "correct horse", "tenantId": tenant})
                if status == 200:
                    mine.append(email)
                    with ledger.lock:
                        ledger.signed_up.append(email)
                        ledger.sessions.append(body["refreshToken"])
            elif kind == 1 or kind == 3:
                status, body = http("POST", f"{daemon.base}/v1/token?key={API_KEY}",
                                    {"grant_type": "refresh_token", "refresh_token": chain[0]})
                if status == 200:
                    chain[0] = body["refresh_token"]
            elif kind == 2:
                status, body = http("POST", f"{daemon.base}/v1/accounts:signInWithPassword?key={API_KEY}",
                                    {"email": f"seed{index}@example.com", "password": "correct horse", "tenantId": tenant})
                if status == 200:
                    with ledger.lock:
                        ledger.sessions.append(body["refreshToken"])
            else:
                # Toggles come from one worker, one at a time: the last acknowledged is the last committed.
                if index == 0 and step % 10 == 4:
                    value = (step // 10) % 2 == 0
                    status, _ = http("PATCH", f"{daemon.base}/v2/projects/{PROJECT}/tenants/{tenant}?updateMask=client.permissions",
                                     {"client": {"permissions": {"disabledUserDeletion": value}}},
                                     {"Authorization": f"Bearer {admin}"})
                    if status == 200:
                        with ledger.lock:
                            ledger.toggle = (time.monotonic(), value)
                elif index % 2 == 1 and mine:
                    # A password reset: its message goes to the outbox in the same transaction.
                    email = mine.pop()
                    status, _ = http("POST", f"{daemon.base}/v1/accounts:sendOobCode?key={API_KEY}",
                                     {"requestType": "PASSWORD_RESET", "email": email, "tenantId": tenant})
                    if status == 200:
                        with ledger.lock:
                            ledger.resets.append(email)
                else:
                    uid = f"made-{index}-{step}-{time.monotonic_ns()}"
                    status, _ = http("POST", f"{daemon.base}/v1/projects/{PROJECT}/tenants/{tenant}/accounts",
                                     {"localId": uid}, {"Authorization": f"Bearer {admin}"})
                    if status == 200:
                        with ledger.lock:
                            ledger.created.append(uid)
        except OSError:
            status = 0  # no answer at all (connection refused while a daemon restarts, or the client's timeout)
        ledger.record(status, time.monotonic() - started, write=True, what=f"{daemon.name} {kind}")
        if status in (0, 503):
            time.sleep(0.05)
        elif PAUSE:
            time.sleep(PAUSE)


class Prober:
    """Forward auth through the fault: `GET /v1/verify` with one ID token, alternating between
    `targets`, as fast as one thread goes. It needs no database (the tenant's keys are cached),
    so every answer should be 200 whatever PostgreSQL does."""

    def __init__(self, targets, id_token, stop):
        self.statuses, self.slowest = {}, 0.0
        self.thread = threading.Thread(target=self.run, args=(targets, id_token, stop))
        self.thread.start()

    def run(self, targets, id_token, stop):
        step = 0
        while not stop.is_set():
            step += 1
            started = time.monotonic()
            try:
                status = http("GET", f"{targets[step % 2].base}/v1/verify",
                              headers={"Authorization": f"Bearer {id_token}"})[0]
            except OSError:
                status = 0
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.slowest = max(self.slowest, time.monotonic() - started)
            if status == 0:
                time.sleep(0.05)

    def summary(self):
        self.thread.join()
        total = sum(self.statuses.values())
        answers = "all 200" if set(self.statuses) == {200} else ", ".join(
            f"{status}: {count}" for status, count in sorted(self.statuses.items()))
        return f"{total}, {answers}, slowest {self.slowest:.2f} s"


def check(daemons, ledger, tenant, chains, webhook):
    """Counts acknowledged writes that did not survive."""
    lost = 0
    undelivered = webhook.missing(ledger.resets)
    if undelivered:
        lost += len(undelivered)
        log(f"    {len(undelivered)} acknowledged password resets never reached the webhook")
    if ledger.signed_up:
        emails = ",".join("'" + email + "'" for email in ledger.signed_up)
        stored = int(psql(f"SELECT count(*) FROM users WHERE tenant_id = '{tenant}' AND email IN ({emails})"))
        lost += len(ledger.signed_up) - stored
    if ledger.created:
        uids = ",".join("'" + uid + "'" for uid in ledger.created)
        stored = int(psql(f"SELECT count(*) FROM users WHERE tenant_id = '{tenant}' AND uid IN ({uids})"))
        lost += len(ledger.created) - stored
    for index, token in enumerate(ledger.sessions + [chain[0] for chain in chains]):
        status, body = http("POST", f"{daemons[index % 2].base}/v1/token?key={API_KEY}",
                            {"grant_type": "refresh_token", "refresh_token": token})
        if status != 200:
            lost += 1
            log(f"    lost session: {status} {body}")
        if index >= len(ledger.sessions):
            worker = index - len(ledger.sessions)
            if status == 200:
                chains[worker][0] = body["refresh_token"]
            else:
                # Counted once: the next fault starts from a new session.
                status, body = http("POST", f"{daemons[0].base}/v1/accounts:signInWithPassword?key={API_KEY}",
                                    {"email": f"seed{worker}@example.com", "password": "correct horse", "tenantId": tenant})
                chains[worker][0] = body["refreshToken"]
    if ledger.toggle:
        expected = ledger.toggle[1]
        for daemon in daemons:
            # Each instance applies a toggle within a second; a request then sees it.
            time.sleep(1.2)
            status, body = http("GET", f"{daemon.base}/v2/projects/{PROJECT}/tenants/{tenant}",
                                headers={"Authorization": f"Bearer {ADMIN}"})
            if status != 200 or body.get("client", {}).get("permissions", {}).get("disabledUserDeletion", False) != expected:
                lost += 1
                log(f"    toggle lost on {daemon.name}: {status} {body}")
    return lost


def pg_ctl(arguments):
    shell(f'pg_as_owner "$(pg_find_bin)/pg_ctl" -D {WORK}/pg/data {arguments} >/dev/null')


def pg_start():
    shell(f"pg_start_cluster {WORK}/pg {PG_PORT}")


def fault_restart(daemons):
    pg_ctl("-m fast -w restart")
    return time.monotonic()


def fault_crash(daemons):
    pg_ctl("-m immediate -w stop")
    pg_start()
    return time.monotonic()


def fault_stop(daemons):
    pg_ctl("-m fast -w stop")
    time.sleep(10)
    pg_start()
    return time.monotonic()


def fault_terminate(daemons):
    until = time.monotonic() + 5
    while time.monotonic() < until:
        psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'faults' AND pid <> pg_backend_pid()")
        time.sleep(0.2)
    return time.monotonic()


def fault_kill(daemons):
    daemons[0].kill()
    daemons[0].start()
    return time.monotonic()


def fault_sighup(daemons):
    daemons[1].process.send_signal(signal.SIGHUP)
    return time.monotonic()


def fault_rolling(daemons):
    """Each instance in turn: SIGTERM, wait for it to exit, start it, wait until HAProxy sends to it again."""
    for daemon in daemons:
        daemon.stop()
        daemon.start()
        time.sleep(1.5)
    return time.monotonic()


# (name, inject, through the proxy): a rolling restart is measured as clients behind the proxy see it.
FAULTS = [
    ("restart", fault_restart, False), ("crash", fault_crash, False), ("stop 10 s", fault_stop, False),
    ("terminate backends", fault_terminate, False), ("SIGKILL instance", fault_kill, False),
    ("SIGHUP instance", fault_sighup, False), ("rolling restart behind HAProxy", fault_rolling, True),
]

ADMIN = ""


class Setup:
    """Both daemons, the proxy in front of them, the tenant (its email webhook here), and
    each worker's refresh chain."""

    def __init__(self):
        global ADMIN
        env = dict(os.environ, PORTCULLIS_PROJECT_ID=PROJECT, PORTCULLIS_MASTER_KEY_FILE=f"{WORK}/master.key",
                   PORTCULLIS_DATABASE_URL=DATABASE_URL)
        subprocess.run([f"{BIN}/portcullis", "migrate"], env=env, check=True, stdout=subprocess.DEVNULL)
        created = subprocess.run([f"{BIN}/portcullis", "admin-keys", "create", "--name", "faults"], env=env, check=True,
                                 capture_output=True, text=True)
        ADMIN = created.stdout.strip().splitlines()[-1]
        self.daemons = [Daemon(PORTS[0], "a"), Daemon(PORTS[1], "b")]
        self.proxy = Proxy(self.daemons)
        self.webhook = Webhook()
        status, body = http("POST", f"{self.daemons[0].base}/v2/projects/{PROJECT}/tenants",
                            {"displayName": "faults", "allowPasswordSignup": True,
                             "scryptParameters": {"logN": 10, "r": 1, "p": 1},
                             "emailDelivery": {"channel": "WEBHOOK", "webhookUri": self.webhook.url}},
                            {"Authorization": f"Bearer {ADMIN}"})
        if status != 200:
            raise SystemExit(f"tenant creation failed: {status} {body}")
        self.tenant = body["name"].split("/")[-1]
        self.chains = []
        for index in range(WORKERS):
            status, body = http("POST", f"{self.daemons[0].base}/v1/accounts:signUp?key={API_KEY}",
                                {"email": f"seed{index}@example.com", "password": "correct horse", "tenantId": self.tenant})
            self.chains.append([body["refreshToken"]])

    HEADER = ("| run | fault | writes lost | answers by status | 5xx but 503 | past timeout + 1 s | slowest "
              "| longest write gap | writes back after | `/v1/verify` |\n|---|---|---|---|---|---|---|---|---|---|")

    def measure(self, run, name, inject, proxied, before=3, after=6):
        """Runs the load, injects the fault `before` seconds in, goes on `after` seconds more
        once `inject` returns, checks, and prints the row; returns whether the fault broke a
        promise. `inject` returns the moment writes are timed from: when the fault was over
        (scripts/faults: the server accepts connections again) or when it began (scripts/ha:
        the primary died)."""
        ledger = Ledger()
        stop = threading.Event()
        targets = [self.proxy, self.proxy] if proxied else self.daemons
        # A fresh ID token each fault (they live an hour; a run of several rounds is longer).
        status, body = http("POST", f"{self.daemons[0].base}/v1/accounts:signInWithPassword?key={API_KEY}",
                            {"email": "seed0@example.com", "password": "correct horse", "tenantId": self.tenant})
        if status != 200:
            raise SystemExit(f"sign-in for the verify prober failed: {status} {body}")
        prober = Prober(targets, body["idToken"], stop)
        threads = [threading.Thread(target=worker, args=(i, targets, ledger, self.tenant, ADMIN, stop, self.chains[i]))
                   for i in range(WORKERS)]
        for thread in threads:
            thread.start()
        time.sleep(before)
        started = time.monotonic()
        mark = inject(self.daemons)
        time.sleep(after)
        ended = time.monotonic()
        stop.set()
        for thread in threads:
            thread.join()
        verify = prober.summary()
        for daemon in self.daemons:
            daemon.wait_ready()
        lost = check(self.daemons, ledger, self.tenant, self.chains, self.webhook)
        back = ledger.writes_back(mark)
        recovery = "nothing failed" if back is None else "never" if back == float("inf") else f"{back:.2f} s"
        if TRACE:
            with open(f"{WORK}/answers-{run}-{name.split()[0]}.csv", "w") as file:
                file.write("sent,answered,status,daemon and kind (seconds from the fault's start)\n")
                for sent, answered, status, what in ledger.answers:
                    file.write(f"{sent - started:.3f},{answered - started:.3f},{status},{what}\n")
        killed = name == "SIGKILL instance"  # the only fault where a daemon does not answer for a while
        unanswered = ledger.statuses.get(0, 0) if not killed else 0
        server_errors = sum(count for status, count in ledger.statuses.items() if status >= 500 and status != 503)
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(ledger.statuses.items()))
        verify_failed = any(status != 200 and not (killed and status == 0) for status in prober.statuses)
        log(f"| {run} | {name} | {lost} | {statuses} | {server_errors} | {ledger.late} | {ledger.slowest:.2f} s "
            f"| {ledger.longest_gap(started, ended):.2f} s | {recovery} | {verify} |")
        # Behind the proxy a rolling restart fails no request at all.
        return bool(lost or ledger.late or unanswered or server_errors or verify_failed
                    or (proxied and set(ledger.statuses) != {200}))


def main():
    setup = Setup()
    failed = False
    log(Setup.HEADER)
    for run in range(1, RUNS + 1):
        for name, inject, proxied in FAULTS:
            failed = setup.measure(run, name, inject, proxied) or failed
    setup.proxy.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
