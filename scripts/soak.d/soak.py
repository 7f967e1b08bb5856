"""A long steady load, as scripts/soak describes; run by it, not directly.

Two daemons on one private PostgreSQL under scripts/faults.d/faults.py's mixed load (paced),
sampled every SOAK_SAMPLE seconds: each daemon's RSS and open file descriptors, the
database's connections, and the answers' p50 and p99 over the interval. Writes a CSV and
plots it to a PNG; prints the verdict against DESIGN.md §7's soak targets.
"""

import csv
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "faults.d"))
import faults  # noqa: E402

from faults import log  # noqa: E402

DURATION = int(os.environ.get("SOAK_SECONDS", "1800"))
SAMPLE = int(os.environ.get("SOAK_SAMPLE", "10"))
OUTPUT = os.environ["SOAK_OUTPUT"]  # the CSV and PNG are written as OUTPUT.csv and OUTPUT.png


class Timings(faults.Ledger):
    """The ledger, also keeping each interval's answer times for its percentiles."""

    def __init__(self):
        super().__init__()
        self.interval = []

    def record(self, status, elapsed, write, what=""):
        super().record(status, elapsed, write, what)
        with self.lock:
            self.interval.append(elapsed)
            # The soak does not check its writes afterwards: keeping every one would grow this process.
            self.signed_up.clear()
            self.created.clear()
            self.sessions.clear()
            self.resets.clear()
            self.write_times.clear()

    def take(self):
        with self.lock:
            taken, self.interval = self.interval, []
        return sorted(taken)


def percentile(values, fraction):
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else float("nan")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def open_files(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    setup = faults.Setup()
    ledger = Timings()
    stop = threading.Event()
    threads = [threading.Thread(target=faults.worker, args=(i, setup.daemons, ledger, setup.tenant, faults.ADMIN, stop,
                                                            setup.chains[i]))
               for i in range(faults.WORKERS)]
    for thread in threads:
        thread.start()
    rows = []
    started = time.monotonic()
    with open(f"{OUTPUT}.csv", "w", newline="") as file:
        out = csv.writer(file)
        out.writerow(["seconds", "rss_a_mib", "rss_b_mib", "fds_a", "fds_b", "pg_connections", "answers", "non_200",
                      "p50_ms", "p99_ms"])
        failures_before = 0
        while time.monotonic() - started < DURATION:
            time.sleep(SAMPLE)
            timings = ledger.take()
            with ledger.lock:
                failures = sum(count for status, count in ledger.statuses.items() if status != 200)
            connections = int(faults.psql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'portcullis' "
                                          "AND pid <> pg_backend_pid()"))
            daemons = setup.daemons
            row = [round(time.monotonic() - started), round(rss_kib(daemons[0].process.pid) / 1024, 1),
                   round(rss_kib(daemons[1].process.pid) / 1024, 1), open_files(daemons[0].process.pid),
                   open_files(daemons[1].process.pid), connections, len(timings), failures - failures_before,
                   round(percentile(timings, 0.5) * 1000, 1), round(percentile(timings, 0.99) * 1000, 1)]
            failures_before = failures
            out.writerow(row)
            file.flush()
            rows.append(row)
    stop.set()
    for thread in threads:
        thread.join()
    setup.proxy.close()
    plot(rows)
    sys.exit(0 if verdict(rows) else 1)


def at(rows, seconds):
    """The sample nearest `seconds` (the minute's median, so one slow interval is not the verdict)."""
    window = [row for row in rows if abs(row[0] - seconds) <= 30] or [min(rows, key=lambda row: abs(row[0] - seconds))]
    return [sorted(values)[len(values) // 2] for values in zip(*window)]


def verdict(rows):
    early, late = at(rows, min(300, rows[-1][0] // 6)), at(rows, rows[-1][0])
    checks = [
        ("RSS of instance A", early[1], late[1], 0.10), ("RSS of instance B", early[2], late[2], 0.10),
        ("p99", early[9], late[9], 0.20),
    ]
    passed = True
    log(f"| measure | at {early[0]} s | at {late[0]} s | change | target |")
    log("|---|---|---|---|---|")
    for name, first, last, limit in checks:
        change = (last - first) / first if first else 0.0
        ok = change <= limit
        passed = passed and ok
        log(f"| {name} | {first} | {last} | {change:+.1%} | ≤ {limit:+.0%} {'✓' if ok else '✗'} |")
    # Counts move with the requests in flight (each client request is a connection of its own):
    # flat means the last minute's median no higher than the fifth minute's, give or take two.
    for name, column in (("file descriptors A", 3), ("file descriptors B", 4), ("PostgreSQL connections", 5)):
        values = [row[column] for row in rows]
        flat = late[column] - early[column] <= 2
        passed = passed and flat
        log(f"| {name} | {early[column]} | {late[column]} | {late[column] - early[column]:+d} (range {min(values)}–{max(values)}) "
            f"| flat {'✓' if flat else '✗'} |")
    non_200 = sum(row[7] for row in rows)
    log(f"answers: {sum(row[6] for row in rows)}, not 200: {non_200}")
    return passed and non_200 == 0


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    minutes = [row[0] / 60 for row in rows]
    figure, axes = pyplot.subplots(3, 1, figsize=(9, 9), sharex=True)
    axes[0].plot(minutes, [row[1] for row in rows], label="instance A")
    axes[0].plot(minutes, [row[2] for row in rows], label="instance B")
    axes[0].set_ylabel("RSS (MiB)")
    axes[0].legend()
    axes[1].plot(minutes, [row[3] for row in rows], label="fds A")
    axes[1].plot(minutes, [row[4] for row in rows], label="fds B")
    axes[1].plot(minutes, [row[5] for row in rows], label="PostgreSQL connections")
    axes[1].set_ylabel("count")
    axes[1].legend()
    axes[2].plot(minutes, [row[8] for row in rows], label="p50")
    axes[2].plot(minutes, [row[9] for row in rows], label="p99")
    axes[2].set_ylabel("answer time (ms)")
    axes[2].set_xlabel("minutes")
    axes[2].legend()
    figure.suptitle(f"scripts/soak: two instances, {faults.WORKERS} workers, one sample per {SAMPLE} s")
    figure.tight_layout()
    figure.savefig(f"{OUTPUT}.png", dpi=80)


if __name__ == "__main__":
    main()
