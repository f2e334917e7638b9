"""Shared set-up checks of the Python integration tests (imported from the scripts' directory)."""
import os
import shutil
import signal
import subprocess
import sys


def bpf_skip_reason(why_root):
    """Why this test cannot run here (not root, no bpffs that can be mounted), or None."""
    if os.geteuid() != 0:
        return f"needs root ({why_root})"
    if subprocess.run(["mountpoint", "-q", "/sys/fs/bpf"]).returncode != 0:
        if subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"]).returncode != 0:
            return "bpffs is not mounted and cannot be mounted"
    return None


def require_bpf(why_root):
    """Exits with ctest's skip code 77, saying why, when bpf_skip_reason finds a reason."""
    reason = bpf_skip_reason(why_root)
    if reason:
        print(f"SKIP: {reason}")
        sys.exit(77)


def stop_processes(procs, *dirs):
    """SIGTERM each live process (last started first), kill it after 10 s, then remove the dirs.
    A process started in a session of its own (start_new_session=True) leads a process group: once
    it is gone, whatever is left of its group (children it did not stop) is killed too, so that no
    straggler keeps ctest's output pipe open until the test's timeout. Returns the pids of the
    stragglers it killed that way."""
    stragglers = []
    for p in reversed([p for p in procs if p is not None]):
        group = None
        try:
            if os.getpgid(p.pid) == p.pid:
                group = p.pid
        except OSError:
            pass
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if group is not None:
            left = group_members(group)
            if left:
                stragglers += left
                try:
                    os.killpg(group, signal.SIGKILL)
                except OSError:
                    pass  # they ended meanwhile
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return stragglers


def group_members(pgid):
    """The pids of the live (not zombie) processes of a process group."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def wait_for(pred, timeout=10.0, step=0.1):
    """pred() until it is truthy (that value is returned) or `timeout` seconds pass (then its last
    value): how every integration test waits for the daemon to converge."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def checker(failures):
    """check(ok, what): prints `ok` or `FAIL` and the check, records a failure in `failures`."""
    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)
        return ok
    return check


def cli_runner(cli_path, sock):
    """cli(*args) -> (exit code, stdout, stderr) and cli_json(*args) -> the parsed `-o json` output
    (AssertionError on a non-zero exit), both against the daemon on `sock`."""
    import json

    def cli(*args, timeout=30):
        r = subprocess.run([cli_path, *args, "--socket", sock], capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr

    def cli_json(*args):
        code, out, err = cli(*args, "-o", "json")
        if code != 0:
            raise AssertionError(f"claim2core {' '.join(args)} -o json: exit {code}: {err}")
        return json.loads(out)
    return cli, cli_json
