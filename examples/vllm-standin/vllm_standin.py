"""A stand-in for stock vLLM's process and thread naming (issue #15), for the demo and tests.

It does what vLLM does (vllm/utils/system_utils.py set_process_title, vllm/v1/engine/core.py,
vllm/v1/executor/multiproc_executor.py), with the same setproctitle library (Debian's
python3-setproctitle) on Python 3.11, and no model:

  API server (the launcher; one API server keeps the launcher's name: comm `vllm`)
    tokenizer pool (a one-thread ThreadPoolExecutor, no name), ZMQbg/IO/0, ZMQbg/Reaper
  EngineCore per DP rank (multiprocessing spawn; setproctitle("VLLM::EngineCore_DP<r>"))
    a thread started before the title is set (keeps comm `python3`), the busy loop (main thread),
    the input and output socket threads (unnamed, started after: comm `VLLM::EngineCor`),
    ZMQbg/IO/0, ZMQbg/Reaper (libzmq names its threads itself)
  Worker per TP rank of each engine (setproctitle("VLLM::Worker_DP<r>_TP<t>"))
    the busy loop (main thread), ZMQbg/IO/0, ZMQbg/Reaper

The prefix `VLLM` is vLLM's VLLM_PROCESS_NAME_PREFIX. Every process writes its threads (tid, tgid,
comm, title, part) to <report-dir>/<pid>.json; the launcher prints one JSON object per thread of
the whole tree, then `ready`, and runs until SIGTERM/SIGINT or --seconds. Children die with the
launcher (PR_SET_PDEATHSIG).

  python3 examples/vllm-standin/vllm serve --data-parallel-size 2 --tensor-parallel-size 2
"""
import argparse
import concurrent.futures
import ctypes
import json
import multiprocessing
import os
import signal
import sys
import threading
import time

import setproctitle

PR_SET_NAME = 15
PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)
_stop = threading.Event()
_threads = []  # (part, tid) of this process, in creation order


def prefix():
    return os.environ.get("VLLM_PROCESS_NAME_PREFIX", "VLLM")


def set_process_title(name, suffix=""):
    # vLLM: setproctitle.setproctitle(f"{envs.VLLM_PROCESS_NAME_PREFIX}::{name}{suffix}")
    setproctitle.setproctitle(f"{prefix()}::{name}{suffix}")


def comm(tid):
    with open(f"/proc/{os.getpid()}/task/{tid}/comm") as f:
        return f.read().rstrip("\n")


def title():
    with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
        return f.read().split(b"\0")[0].decode(errors="replace")


def start_thread(part, target, os_name=None):
    """Start a thread; os_name: prctl(PR_SET_NAME) inside it, as libzmq does for its threads."""
    ready = threading.Event()

    def run():
        if os_name:
            _libc.prctl(PR_SET_NAME, os_name.encode(), 0, 0, 0)
        _threads.append((part, threading.get_native_id()))
        ready.set()
        target()

    threading.Thread(target=run, daemon=True).start()
    ready.wait()


def idle():
    while not _stop.wait(0.05):
        pass


def zmq_context(kind):
    # zmq.Context(): libzmq starts an I/O thread and a reaper, named by libzmq itself.
    start_thread(f"{kind}-zmq-reaper", idle, "ZMQbg/Reaper")
    start_thread(f"{kind}-zmq-io", idle, "ZMQbg/IO/0")


def busy_loop(args):
    """The main thread's loop: a step every --period-us, --work-us of it spinning (like a decode step)."""
    period = args.period_us / 1e6
    work = args.work_us / 1e6
    deadline = time.monotonic()
    while not _stop.is_set():
        t = time.monotonic()
        while time.monotonic() - t < work:
            pass
        deadline += period
        delay = deadline - time.monotonic()
        if delay > 0:
            _stop.wait(delay)
        else:
            deadline = time.monotonic()


def report(args, part_of_main):
    _threads.insert(0, (part_of_main, threading.get_native_id()))
    rows = [{"tid": tid, "tgid": os.getpid(), "comm": comm(tid), "title": title(), "part": part}
            for part, tid in _threads]
    path = os.path.join(args.report_dir, f"{os.getpid()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(rows, f)
    os.rename(path + ".tmp", path)


def stop_processes(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join(1)


def child_setup():
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    signal.signal(signal.SIGTERM, lambda *_: _stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_worker(args, dp_rank, tp_rank):
    child_setup()
    suffix = (f"_DP{dp_rank}" if args.data_parallel_size > 1 else "") + \
             (f"_TP{tp_rank}" if args.tensor_parallel_size > 1 else "")
    set_process_title("Worker", suffix)
    zmq_context("worker")
    report(args, "worker-busy-loop")
    busy_loop(args)
    os._exit(0)


def run_engine_core(args, dp_rank):
    child_setup()
    # Started before the title is set (an import-time helper): keeps the comm `python3`.
    start_thread("engine-pre-title", idle)
    set_process_title("EngineCore", f"_DP{dp_rank}" if args.data_parallel_size > 1 else "")
    ctx = multiprocessing.get_context("spawn")
    workers = []
    if args.tensor_parallel_size > 1:  # MultiprocExecutor: one process per TP rank
        for t in range(args.tensor_parallel_size):
            p = ctx.Process(target=run_worker, args=(args, dp_rank, t), name=f"VllmWorker-{t}", daemon=True)
            p.start()
            workers.append(p)
    # EngineCoreProc: the input and output socket threads (unnamed), then the ZMQ context.
    start_thread("engine-core-input", idle)
    start_thread("engine-core-output", idle)
    zmq_context("engine")
    report(args, "engine-core-busy-loop")
    busy_loop(args)
    stop_processes(workers)
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(prog="vllm", description=__doc__.split("\n")[0])
    ap.add_argument("command", nargs="?", default="serve", choices=["serve"])
    ap.add_argument("--data-parallel-size", type=int, default=2)
    ap.add_argument("--tensor-parallel-size", type=int, default=2)
    ap.add_argument("--api-server-count", type=int, default=1)
    ap.add_argument("--period-us", type=int, default=50000, help="busy loop period (default 50 ms)")
    ap.add_argument("--work-us", type=int, default=100, help="busy loop work per period")
    ap.add_argument("--seconds", type=float, default=0, help="exit after this long (0: until a signal)")
    ap.add_argument("--report-dir", default=None)
    args = ap.parse_args()
    owned_dir = args.report_dir is None
    if owned_dir:
        import tempfile
        args.report_dir = tempfile.mkdtemp(prefix="vllm-standin.")
    os.makedirs(args.report_dir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: _stop.set())
    signal.signal(signal.SIGINT, lambda *_: _stop.set())
    if args.api_server_count > 1:
        # Several API servers are titled APIServer_<i> (only one is simulated here).
        set_process_title("APIServer", "_0")
    # The tokenizer pool: one thread, no name prefix.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    pool.submit(lambda: _threads.append(("tokenizer", threading.get_native_id()))).result()
    zmq_context("api")
    ctx = multiprocessing.get_context("spawn")
    engines = [ctx.Process(target=run_engine_core, args=(args, r), name=f"EngineCore_DP{r}")
               for r in range(args.data_parallel_size)]
    for p in engines:
        p.start()
    report(args, "api-server")
    expected = 1 + args.data_parallel_size * (1 + (args.tensor_parallel_size if args.tensor_parallel_size > 1 else 0))
    deadline = time.monotonic() + 60
    while len([n for n in os.listdir(args.report_dir) if n.endswith(".json")]) < expected:
        if time.monotonic() > deadline or _stop.is_set() or not all(p.is_alive() for p in engines):
            print("vllm-standin: not every process reported its threads", file=sys.stderr)
            return 1
        time.sleep(0.02)
    for name in sorted(os.listdir(args.report_dir)):
        if name.endswith(".json"):
            with open(os.path.join(args.report_dir, name)) as f:
                for row in json.load(f):
                    print(json.dumps(row))
    print("ready", flush=True)
    until = time.monotonic() + args.seconds
    while not _stop.wait(0.05):
        if args.seconds and time.monotonic() >= until:
            break
    _stop.set()
    stop_processes(engines)
    if owned_dir:
        import shutil
        shutil.rmtree(args.report_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
