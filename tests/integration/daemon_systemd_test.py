"""claim2cored under systemd's protocols, without systemd (issue 17): a datagram socket stands in
for NOTIFY_SOCKET and one for journald's /run/systemd/journal/socket (bind-mounted over it in a
private mount namespace, so the host's /run is untouched). The daemon must send READY=1 once it
serves, WATCHDOG=1 every half WATCHDOG_USEC while its loop turns and STOPPING=1 on SIGTERM; with
JOURNAL_STREAM naming its stderr, every line goes to the journal, and the accepted change and the
intent transitions of an applied policy carry POLICY, GENERATION, TASKS and ENTRIES as journal
fields. With a JOURNAL_STREAM naming another file (seeded: inherited, stale) the lines stay on
stderr as in a container log: logfmt records whose timestamps carry a zone offset.

  daemon_systemd_test.py <claim2cored> <claim2core> <c2c-fake-vllm> <source dir> <work dir>
"""
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

DAEMON, CLI, FAKE, SRC, WORK = sys.argv[1:6]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from c2c_it import require_bpf, stop_processes  # noqa: E402

POLICY = os.path.join(SRC, "examples", "policies", "vllm-enginecore.yaml")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit"))
from check_lines import check, finish  # noqa: E402


def datagram_socket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    return s


def receive(sock, until, timeout):
    """Datagrams until until(list) is true or the timeout passes."""
    got, end = [], time.time() + timeout
    while time.time() < end and not until(got):
        r, _, _ = select.select([sock], [], [], max(0.0, end - time.time()))
        if r:
            got.append(sock.recv(1 << 20))
    return got


class Collector:
    """Reads a datagram socket while the daemon writes to it: a socket nobody reads holds only
    net.unix.max_dgram_qlen datagrams (10 by default), and the next send blocks the daemon."""

    def __init__(self, sock):
        self.got = []
        threading.Thread(target=self.run, args=(sock,), daemon=True).start()

    def run(self, sock):
        while True:
            try:
                self.got.append(sock.recv(1 << 20))
            except OSError:
                return


def journal_entry(data):
    """journald's native protocol: KEY=value lines, or KEY\\n<le64 size><value>\\n for binary values."""
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            fields[k.decode()] = v.decode(errors="replace")
            i = nl + 1
        else:
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            fields[line.decode()] = data[nl + 9:nl + 9 + n].decode(errors="replace")
            i = nl + 9 + n + 1
    return fields


def start(root, pin, env, stderr_path, journal_sock=None):
    base = [DAEMON, "--config", "/dev/null", "--node-name", "dgx-spark-gb10", "--socket", os.path.join(root, "d.sock"),
            "--state-dir", os.path.join(root, "state"), "--pin-root", pin, "--task-discovery", "scan"]
    cmd = base
    if journal_sock:
        # A private mount namespace where journald's socket path is ours.
        script = ('mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/journal && '
                  ': > /run/systemd/journal/socket && mount --bind "$0" /run/systemd/journal/socket && exec "$@"')
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, journal_sock] + base
    err = open(stderr_path, "w")
    if "JOURNAL_STREAM" in env and env["JOURNAL_STREAM"] == "self":
        st = os.fstat(err.fileno())
        env = dict(env, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    return subprocess.Popen(cmd, stdout=err, stderr=err, env=env)


def cli(root, *args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, CLAIM2CORE_SOCKET=os.path.join(root, "d.sock")))


def wait_for_socket(root, proc, timeout=30):
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        if cli(root, "status").returncode == 0:
            return True
        time.sleep(0.2)
    return False


def apply_and_wait_applied(root):
    if cli(root, "apply", "-f", POLICY).returncode != 0:
        return False
    end = time.time() + 20
    while time.time() < end:
        out = cli(root, "get", "intents", "vllm-enginecore").stdout
        if "Applied" in out or "APPLIED" in out:
            return True
        time.sleep(0.2)
    return False


def under_systemd(fake_started):
    root = tempfile.mkdtemp(prefix="c2c-systemd-", dir=WORK)
    pin = f"/sys/fs/bpf/c2c-systemd-{os.getpid()}"
    notify = datagram_socket(os.path.join(root, "notify.sock"))
    journal = Collector(datagram_socket(os.path.join(root, "journal.sock")))
    env = dict(os.environ, NOTIFY_SOCKET=os.path.join(root, "notify.sock"), WATCHDOG_USEC="1000000",
               JOURNAL_STREAM="self")
    env.pop("WATCHDOG_PID", None)
    proc = start(root, pin, env, os.path.join(root, "stderr"), journal_sock=os.path.join(root, "journal.sock"))
    try:
        msgs = receive(notify, lambda g: any(b"READY=1" in m for m in g), 30)
        check(any(b"READY=1" in m for m in msgs), "READY=1 once the daemon serves")
        check(wait_for_socket(root, proc), "the socket answers after READY=1")
        pings = receive(notify, lambda g: sum(b"WATCHDOG=1" in m for m in g) >= 3, 5)
        check(sum(b"WATCHDOG=1" in m for m in pings) >= 3, "WATCHDOG=1 about every 0.5 s (WATCHDOG_USEC=1 s)")
        check(apply_and_wait_applied(root), "the policy reaches Applied")
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        stop = receive(notify, lambda g: any(b"STOPPING=1" in m for m in g), 15)
        check(any(b"STOPPING=1" in m for m in stop), "STOPPING=1 on SIGTERM")
        proc.wait(timeout=30)
        time.sleep(0.5)
        entries = [journal_entry(d) for d in journal.got]
        check(len(entries) > 5, f"{len(entries)} journal entries")
        check(all(e.get("SYSLOG_IDENTIFIER") == "claim2cored" and e.get("PRIORITY", "").isdigit() for e in entries),
              "every entry has SYSLOG_IDENTIFIER=claim2cored and a PRIORITY")
        pol = "NodeSchedulingPolicy/vllm-enginecore"
        change = [e for e in entries if e.get("MESSAGE", "").startswith("change accepted") and e.get("POLICY") == pol]
        check(bool(change) and change[0].get("GENERATION", "").isdigit() and "TASKS" in change[0]
              and "NODE_GENERATION" in change[0], f"the accepted change has POLICY={pol}, GENERATION, TASKS")
        applied = [e for e in entries if e.get("POLICY") == pol and e.get("INTENT_STATE") == "APPLIED"]
        # At least our helper's two EngineCore threads (the host may run other vLLM-like processes).
        check(bool(applied) and int(applied[0].get("TASKS", "0")) >= 2 and applied[0].get("ENTRIES") == applied[0].get("TASKS"),
              "the intent's transition to APPLIED has TASKS >= 2 and ENTRIES = TASKS"
              + f": {[e.get('MESSAGE') for e in entries if 'intent' in e.get('MESSAGE', '')]}")
        stderr = open(os.path.join(root, "stderr")).read()
        check("intent" not in stderr, "nothing of it went to stderr as well")
    finally:
        stop_processes([proc], root, pin)


def container_log(journal_stream):
    """No journal: stderr lines with zoned timestamps; returns the log."""
    root = tempfile.mkdtemp(prefix="c2c-log-", dir=WORK)
    pin = f"/sys/fs/bpf/c2c-log-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "JOURNAL_STREAM", "WATCHDOG_USEC")}
    if journal_stream:
        env["JOURNAL_STREAM"] = journal_stream
    proc = start(root, pin, env, os.path.join(root, "stderr"))
    try:
        check(wait_for_socket(root, proc), "the daemon serves without systemd")
        check(apply_and_wait_applied(root), "the policy reaches Applied")
        time.sleep(0.5)
    finally:
        stop_processes([proc])
    log = open(os.path.join(root, "stderr")).read()
    stop_processes([], root, pin)
    return log


def main():
    require_bpf("bpffs, BPF maps")
    os.makedirs(WORK, exist_ok=True)
    fake = subprocess.Popen([FAKE], stdout=subprocess.PIPE, text=True)
    try:
        for line in fake.stdout:
            if line.strip() == "ready":
                break
        under_systemd(fake)
        # Seeded: a JOURNAL_STREAM inherited from somewhere else (another inode) is not this
        # stderr, so the lines must stay there, as in a container log.
        log = container_log("1:1")
        zoned = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d \S+ ")
        lines = log.splitlines()
        check(bool(lines) and all(zoned.match(l) for l in lines if l.strip()),
              "with a stale JOURNAL_STREAM every line stays on stderr and starts with a zoned timestamp")
        change = [l for l in lines if "change accepted" in l and "policy=NodeSchedulingPolicy/vllm-enginecore" in l]
        check(bool(change) and re.search(r" generation=\d+ ", change[0]) and " tasks=" in change[0],
              "the accepted change is one logfmt line with policy, generation, tasks")
        applied = [l for l in lines if "-> APPLIED" in l and "vllm-enginecore" in l]
        m = re.search(r" tasks=(\d+) entries=(\d+)", applied[0]) if applied else None
        check(bool(m) and int(m.group(1)) >= 2 and m.group(1) == m.group(2),
              "the transition to APPLIED is one line with tasks >= 2 and entries = tasks"
              + ("" if applied else "\n" + log))
    finally:
        fake.kill()
        fake.wait()
    finish("ok: sd_notify, watchdog, journal fields and zoned logfmt lines")


if __name__ == "__main__":
    main()
