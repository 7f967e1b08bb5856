"""High availability under load, as scripts/ha describes; run by it, not directly.

etcd and three PostgreSQL nodes under Patroni (synchronous mode, strict) on loopback; two
daemons on the three-host URL, HAProxy in front of them (deploy/haproxy.cfg); the load,
checks and table of scripts/faults.d/faults.py; and the faults of a Patroni cluster.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

WORK = os.environ["FAULTS_WORK"]
HA_PORTS = [int(port) for port in os.environ["HA_PORTS"].split()]  # etcd client, etcd peer, then per node: PostgreSQL, REST
ETCD_CLIENT, ETCD_PEER = HA_PORTS[0], HA_PORTS[1]
NODES = [{"name": f"n{index + 1}", "pg": HA_PORTS[2 + 2 * index], "rest": HA_PORTS[3 + 2 * index]} for index in range(3)]
hosts = ",".join(f"127.0.0.1:{node['pg']}" for node in NODES)
os.environ["FAULTS_DATABASE_URL"] = f"postgresql://portcullis@{hosts}/faults?target_session_attrs=read-write"
os.environ["FAULTS_PSQL"] = (
    f"host={','.join('127.0.0.1' for _ in NODES)} port={','.join(str(node['pg']) for node in NODES)} "
    "user=portcullis dbname=faults target_session_attrs=read-write")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "faults.d"))
import faults  # noqa: E402  (after the environment it reads)

from faults import log  # noqa: E402

# The DCS settings the report states (DESIGN.md §7's failover target assumes them).
DCS = {
    "ttl": 10, "loop_wait": 1, "retry_timeout": 4, "maximum_lag_on_failover": 1048576,
    # A crashed primary fails over at once instead of being restarted in place (default 300 s).
    "primary_start_timeout": 0,
    "synchronous_mode": True, "synchronous_mode_strict": True, "synchronous_node_count": 1,
    "postgresql": {
        # No replication slots: a new primary refuses a standby until its Patroni creates the
        # standby's slot on its next loop, and under strict mode no commit completes meanwhile
        # (switchovers took 5.5-6.3 s with slots, 3.2-3.4 s without; deploy/README.md).
        # wal_keep_size below keeps the WAL a standby needs to catch up instead.
        "use_pg_rewind": True, "use_slots": False,
        "parameters": {
            "max_connections": 200, "max_wal_senders": 10, "max_replication_slots": 10, "wal_level": "replica",
            "hot_standby": "on", "synchronous_commit": "on", "wal_keep_size": "128MB", "wal_log_hints": "on",
            # A standby whose primary went away retries its connection after this (default 5 s):
            # under synchronous_mode_strict no commit completes until one streams from the new
            # primary, so the default alone held every switchover's writes for 5 s.
            "wal_retrieve_retry_interval": "500ms",
        },
    },
}


# etcd's v2 API, not v3: Patroni 3.0.2 (Debian 12's) renews its leader key over v3 with a
# plain PUT, so a primary whose Patroni stalled past `ttl` (its PostgreSQL frozen) takes the
# key back from the standby promoted meanwhile, and the writes acknowledged there are
# rewound away (scripts/ha measured it: RELIABILITY.md). Over v2 the renewal is a
# compare-and-swap on the key's value; later Patroni releases compare over v3 too.
DCS_API = "etcd"


def as_postgres(arguments, **options):
    return subprocess.Popen(["runuser", "-u", "postgres", "--"] + arguments, **options)


def rest(node, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{node['rest']}{path}", timeout=2) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, {}
    except (OSError, ValueError):
        return 0, {}


class Cluster:
    """etcd and three Patroni nodes; stopped by scripts/ha's cleanup whatever happens here."""

    def __init__(self):
        self.etcd = subprocess.Popen(
            ["etcd", "--name", "e1", "--data-dir", f"{WORK}/etcd",
             "--listen-client-urls", f"http://127.0.0.1:{ETCD_CLIENT}", "--advertise-client-urls", f"http://127.0.0.1:{ETCD_CLIENT}",
             "--listen-peer-urls", f"http://127.0.0.1:{ETCD_PEER}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{ETCD_PEER}",
             "--initial-cluster", f"e1=http://127.0.0.1:{ETCD_PEER}", "--initial-cluster-state", "new",
             # Patroni speaks etcd's v2 API here (see DCS_API below).
             "--enable-v2=true"],
            stdout=subprocess.DEVNULL, stderr=open(f"{WORK}/etcd.log", "a"))
        self.patroni = {}
        for node in NODES:
            self.configure(node)
        self.start(NODES[0])
        self.wait(lambda: rest(NODES[0], "/primary")[0] == 200, "n1 to bootstrap as the primary")
        for node in NODES[1:]:
            self.start(node)
        self.wait(self.healthy, "a synchronous standby and every replica streaming")
        subprocess.run([f"{faults.PG_BIN}/createdb", "-h", "127.0.0.1", "-p", str(self.primary()["pg"]), "-U", "portcullis",
                        "faults"], check=True)

    def configure(self, node):
        directory = f"{WORK}/{node['name']}"
        os.makedirs(directory, exist_ok=True)
        configuration = {
            "scope": "portcullis-ha", "namespace": "/service/", "name": node["name"], "log": {"level": "INFO"},
            "restapi": {"listen": f"127.0.0.1:{node['rest']}", "connect_address": f"127.0.0.1:{node['rest']}"},
            DCS_API: {"hosts": f"127.0.0.1:{ETCD_CLIENT}"},
            "bootstrap": {"dcs": DCS, "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}]},
            "postgresql": {
                "listen": f"127.0.0.1:{node['pg']}", "connect_address": f"127.0.0.1:{node['pg']}",
                "data_dir": f"{directory}/data", "bin_dir": faults.PG_BIN, "pgpass": f"{directory}/pgpass",
                "authentication": {
                    "superuser": {"username": "portcullis"}, "replication": {"username": "portcullis"},
                    "rewind": {"username": "portcullis"},
                },
                "parameters": {"unix_socket_directories": directory},
                "pg_hba": ["local all all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"],
                "basebackup": [{"checkpoint": "fast"}],
                "remove_data_directory_on_rewind_failure": True,
                "remove_data_directory_on_diverged_timelines": True,
            },
            "watchdog": {"mode": "off"},
        }
        # JSON is YAML: Patroni reads it as is.
        with open(f"{directory}/patroni.yml", "w") as file:
            json.dump(configuration, file)
        subprocess.run(["chown", "-R", "postgres:", directory], check=True)

    def start(self, node):
        self.patroni[node["name"]] = as_postgres(
            ["patroni", f"{WORK}/{node['name']}/patroni.yml"], stdout=subprocess.DEVNULL,
            stderr=open(f"{WORK}/{node['name']}.log", "a"))

    @staticmethod
    def wait(condition, what, limit=120):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.5)
        raise SystemExit(f"gave up waiting for {what}; see {WORK}/n*.log")

    @staticmethod
    def members():
        for node in NODES:
            status, body = rest(node, "/cluster")
            if status == 200:
                return body.get("members", [])
        return []

    def healthy(self):
        members = self.members()
        roles = sorted(member.get("role") for member in members)
        running = all(member.get("state") in ("running", "streaming") for member in members)
        return len(members) == 3 and running and roles.count("sync_standby") == 1 and "leader" in roles

    def primary(self):
        for node in NODES:
            if rest(node, "/primary")[0] == 200:
                return node
        return None

    def role(self, role):
        names = [member["name"] for member in self.members() if member.get("role") == role]
        return next(node for node in NODES if node["name"] in names)

    @staticmethod
    def postmaster(node):
        with open(f"{WORK}/{node['name']}/data/postmaster.pid") as file:
            return int(file.readline())

    def postgres_processes(self, node):
        """The postmaster and every process it started."""
        parent = self.postmaster(node)
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(parent)], capture_output=True, text=True).stdout.split()
        return [parent] + [int(child) for child in children]

    def settle(self):
        """Back to three healthy members before the next fault, whatever this one did."""
        self.wait(self.healthy, "the cluster to heal (three members, one synchronous standby)", limit=180)


class CommitWatch:
    """Commits a transaction through the three-host connection string every 200 ms through a
    fault (`SELECT txid_current()` takes a transaction id, so its commit waits for the
    synchronous standby as the gateway's do), so the report can tell the cluster's own time
    without commits from the gateway's way back."""

    def __init__(self):
        self.began = time.monotonic()
        self.samples = []  # (seconds since began, whether the commit went through within 1 s)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stopped.is_set():
            polled = time.monotonic()
            try:
                committed = subprocess.run(
                    [f"{faults.PG_BIN}/psql", faults.PSQL + " connect_timeout=1", "-tAc", "SELECT txid_current()"],
                    capture_output=True, timeout=1).returncode == 0
            except subprocess.TimeoutExpired:
                committed = False
            self.samples.append((polled - self.began, committed))
            self.stopped.wait(max(0.0, 0.2 - (time.monotonic() - polled)))

    def summary(self):
        self.stopped.set()
        self.thread.join()
        failed = [at for at, committed in self.samples if not committed]
        if not failed:
            return "the cluster committed throughout (psql, every 200 ms)"
        back = next((at for at, committed in self.samples if committed and at > failed[-1]), None)
        ended = f"{back:.1f} s" if back is not None else "the end of the fault's window"
        return f"the cluster (psql, every 200 ms) committed nothing from {failed[0]:.1f} s to {ended} after the fault began"


def watched(inject, watches):
    """`inject`, with a CommitWatch started (and appended to `watches`) as the fault begins."""
    def begin(daemons):
        watches.append(CommitWatch())
        return inject(daemons)
    return begin


def run():
    cluster = Cluster()
    setup = faults.Setup()
    parameters = ", ".join(f"{key} {DCS[key]}" for key in ("ttl", "loop_wait", "retry_timeout", "primary_start_timeout"))
    log(f"Patroni {subprocess.run(['patroni', '--version'], capture_output=True, text=True).stdout.split()[-1]}, "
        f"synchronous_mode_strict, {parameters}; two instances, request_timeout {faults.REQUEST_TIMEOUT:.0f} s")

    # Each returns the moment the fault began: the writes' way back is timed from there.
    def switchover(daemons):
        # Through the leader's REST API, as patronictl does once it has started: timed from
        # the request, not from launching patronictl (about a second of Python start-up here
        # before the leader hears of it). The answer comes once the new primary runs.
        leader = cluster.role("leader")
        request = urllib.request.Request(
            f"http://127.0.0.1:{leader['rest']}/switchover", method="POST",
            data=json.dumps({"leader": leader["name"]}).encode(), headers={"Content-Type": "application/json"})
        began = time.monotonic()
        with urllib.request.urlopen(request, timeout=60) as response:
            if response.status != 200:
                raise RuntimeError(f"switchover refused: {response.status} {response.read()!r}")
        return began

    def failover(daemons):
        began = time.monotonic()
        os.kill(cluster.postmaster(cluster.role("leader")), signal.SIGKILL)
        return began

    def replica_lost(daemons):
        # The synchronous standby: under strict mode the primary's commits wait until Patroni names the other.
        began = time.monotonic()
        os.kill(cluster.postmaster(cluster.role("sync_standby")), signal.SIGKILL)
        return began

    def primary_frozen(daemons):
        # PostgreSQL's processes only (its Patroni keeps running, as when the database hangs on I/O).
        frozen = cluster.postgres_processes(cluster.role("leader"))
        began = time.monotonic()
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(20)
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        return began

    ha_faults = [
        ("switchover", switchover, False, 6), ("failover (SIGKILL primary)", failover, False, 20),
        ("replica lost (SIGKILL sync standby)", replica_lost, False, 10), ("primary frozen 20 s", primary_frozen, False, 10),
        ("SIGKILL instance", faults.fault_kill, False, 6), ("rolling restart behind HAProxy", faults.fault_rolling, True, 6),
    ]
    # HA_FAULTS=frozen,failover runs only the faults whose names contain one of the words.
    chosen = [word for word in os.environ.get("HA_FAULTS", "").split(",") if word]
    ha_faults = [fault for fault in ha_faults if not chosen or any(word in fault[0] for word in chosen)]
    failed = False
    log(faults.Setup.HEADER)
    for run_number in range(1, faults.RUNS + 1):
        for name, inject, proxied, after in ha_faults:
            cluster.settle()
            watches = []
            failed = setup.measure(run_number, name, watched(inject, watches), proxied, after=after) or failed
            log(f"    {watches[0].summary()}")
    setup.proxy.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    run()
