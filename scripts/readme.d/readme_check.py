"""Runs README.md's shell examples, in order, against a fresh `portcullis dev`.

Run by scripts/check-readme (which scripts/test calls), not directly. It starts `portcullis
dev` on a new database with a new state directory, takes the variables its banner prints
(`KEY`, `ADMIN`, `T`, `B`, `P`, `CONFIG`, the `portcullis` function), runs the banner's own
"Try it" commands, then every ```sh block of the README in order, in one bash session with
`set -euo pipefail`. A block right after `<!-- readme-check: skip (reason) -->` is listed
and not run.

Every curl must answer 2xx, unless the comment lines right after the command show the
answer as an error envelope (`"code":400`): then it must answer that status. Any other
command must succeed, unless the comment after it shows `error:`: then it must fail.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ["PORTCULLIS_BINARY"]
DATABASE_URL = os.environ["README_DATABASE_URL"]
PORT = int(os.environ["README_LISTEN_PORT"])
SKIP = re.compile(r"<!-- readme-check: skip \((.+)\) -->")

# Every curl goes through this: the body as curl prints it, then the status checked.
PRELUDE = r"""
set -euo pipefail
__expect=2xx
curl() {
    local expected="$__expect" output status
    __expect=2xx
    output="$(command curl --show-error --write-out '\n%{http_code}' "$@")" || {
        echo "readme-check: curl failed (exit $?): curl $*" >&2
        return 1
    }
    status="${output##*$'\n'}"
    printf '%s\n' "${output%$'\n'*}"
    if [ "$expected" = 2xx ]; then
        case "$status" in 2??) return 0 ;; esac
    elif [ "$status" = "$expected" ]; then
        return 0
    fi
    echo "readme-check: HTTP $status where the README shows ${expected}: curl $*" >&2
    return 1
}
"""


def blocks(path):
    """The README's ```sh blocks: (first line number, lines, skip reason or None)."""
    found, lines = [], open(path, encoding="utf-8").read().split("\n")
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```sh":
            previous = next((lines[j] for j in range(index - 1, -1, -1) if lines[j].strip()), "")
            skip = SKIP.search(previous)
            end = index + 1
            while lines[end].strip() != "```":
                end += 1
            found.append((index + 2, lines[index + 1:end], skip.group(1) if skip else None))
            index = end
        index += 1
    return found


def complete(text):
    """Whether `text` is a whole shell command: quotes closed, no trailing backslash."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
        return True
    except ValueError:
        return False


def commands(lines):
    """Splits a block into commands, each with the comment lines that follow it."""
    result, current, start = [], [], 0
    for number, line in enumerate(lines):
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            if result and line.lstrip().startswith("#") and result[-1][2] is not None:
                result[-1][2].append(line)
            elif result:
                result[-1] = (result[-1][0], result[-1][1], None)  # a blank line ends the comments
            continue
        if not current:
            start = number
        current.append(line)
        if complete("\n".join(current)):
            result.append((start, "\n".join(current), []))
            current = []
    if current:
        raise SystemExit(f"readme-check: unfinished command: {current}")
    return [(start, text, comments or []) for start, text, comments in result]


def script_for(number, lines):
    """The bash text of one README block, with each command's expected outcome."""
    out = [f"echo '==> README.md line {number}'"]
    for offset, text, comments in commands(lines):
        shown = " ".join(comments)
        code = re.search(r'"code":\s*(\d{3})', shown)
        where = f"README.md line {number + offset}"
        if code:
            out.append(f"__expect={code.group(1)}")
            out.append(text)
        elif "error:" in shown:
            out.append(f"if {text}\nthen echo 'readme-check: {where} should have failed' >&2; exit 1; fi")
        else:
            out.append(text)
    return "\n".join(out)


def wait_for_banner(path, daemon):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = open(path, encoding="utf-8").read()
        if "export FIREBASE_AUTH_EMULATOR_HOST" in text:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/readyz", timeout=2) as answer:
                    if answer.status == 200:
                        return text
            except OSError:
                pass
        if daemon.poll() is not None:
            raise SystemExit(f"readme-check: portcullis dev exited: {text}")
        time.sleep(0.2)
    raise SystemExit("readme-check: portcullis dev printed no banner within 120 s")


def main():
    work = tempfile.mkdtemp(prefix="portcullis-readme-")
    passed = False
    stdout, stderr = f"{work}/dev.out", f"{work}/dev.err"
    daemon = subprocess.Popen(
        [BINARY, "dev", "--database-url", DATABASE_URL, "--listen-port", str(PORT), "--state-directory", f"{work}/state"],
        stdout=open(stdout, "w"), stderr=open(stderr, "w"), cwd=work)
    try:
        banner = wait_for_banner(stdout, daemon)
        paste = banner.split("Paste into another terminal")[1].split("The command line then works")[0]
        variables = [line.strip() for line in paste.split("\n") if re.match(r"\s+(\w+='|\w+\(\) \{)", line)]
        try_it = [line[2:] if line.startswith("  ") else line for line in banner.split("Try it (with the lines above pasted):")[1].split("\n")]
        parts = [PRELUDE, "\n".join(variables), f"cd {shlex.quote(work)}", script_for(0, try_it).replace("README.md line 0", "the banner")]
        skipped = []
        for number, lines, skip in blocks(os.path.join(ROOT, "README.md")):
            if skip:
                skipped.append(f"README.md line {number}: {skip}")
                continue
            parts.append(script_for(number, lines))
        with open(f"{work}/readme.sh", "w") as script:
            script.write("\n".join(parts) + "\n")
        environment = dict(os.environ)
        if os.environ.get("PORTCULLIS_TEST_PYTHON"):
            # The venv scripts/test made (firebase-admin and friends) is the examples' python3.
            environment["PATH"] = os.path.dirname(os.environ["PORTCULLIS_TEST_PYTHON"]) + ":" + environment["PATH"]
        run = subprocess.run(["bash", f"{work}/readme.sh"], cwd=work, env=environment, capture_output=True, text=True, timeout=600)
        for line in skipped:
            print(f"skipped {line}")
        if run.returncode != 0:
            print(run.stdout[-6000:])
            print(run.stderr[-4000:], file=sys.stderr)
            print(f"readme-check: the README's examples failed (exit {run.returncode}); script: {work}/readme.sh", file=sys.stderr)
            sys.exit(1)
        checked = run.stdout.count("==> README.md line")
        print(f"readme-check: the banner's commands and {checked} README blocks ran as shown")
        passed = True
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
    # Kept when something failed, to read the script and the daemon's log.
    if passed:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
