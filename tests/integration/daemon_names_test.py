#!/usr/bin/python3
"""Names are bytes (issue 42): real threads that name themselves with bytes that are not UTF-8, or
with terminal control characters (prctl PR_SET_NAME, through ctypes), in a process whose argv[0]
is not UTF-8 either. Before, one such thread made gRPC ListTasks and Preview fail, `claim2core get
tasks` exit 1 and REST GET /api/v1/tasks answer 500, for everyone on the node.

Checks: ListTasks and Preview answer with the bytes (comm and title are `bytes` in the proto); a
regex matches the name's text (U+FFFD for each ill-formed part: `^EngineCore.$` matches
"EngineCore\\xff", `^EngineCore\\x{FFFD}$` only that one); the policy's entries reach the map;
`claim2core get tasks` prints the table escaped (\\xNN, no raw control character or invalid byte),
-o json and -o yaml as text with U+FFFD; `explain` likewise; REST GET /api/v1/tasks answers 200
with the same text.

Same harness and arguments as daemon_test.py (its Daemon class is reused); the CLI and the REST
gateway come from the environment (C2C_CLI, C2C_REST; without them those parts are skipped):
  daemon_names_test.py <claim2cored> <proto> <thread-churn helper> <work dir> [unittest names...]
"""
import json
import os
import subprocess
import sys
import time
import unittest

import yaml

import daemon_test as dt  # parses the four arguments and generates the proto modules
from daemon_test import Daemon, pb, skip_reason, wait_applied, wait_for
import rest_env

CLI = os.environ.get("C2C_CLI", "")
REST = os.environ.get("C2C_REST", "")
FFFD = "\ufffd"

# A process whose argv[0] is TITLE; one thread per name given (hex), each named by prctl.
TITLE = b"VLLM::Engine\xfe"
NAMER = r"""
import ctypes, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
names = [bytes.fromhex(h) for h in sys.argv[1:]]
tids = [0] * len(names)
done = threading.Semaphore(0)
stop = threading.Event()
def run(i):
    if libc.prctl(15, ctypes.c_char_p(names[i]), 0, 0, 0) != 0:  # PR_SET_NAME
        raise OSError(ctypes.get_errno(), "prctl")
    tids[i] = threading.get_native_id()
    done.release()
    stop.wait()
for i in range(len(names)):
    threading.Thread(target=run, args=(i,), daemon=True).start()
for _ in names:
    done.acquire()
print("ready", *tids, flush=True)
sys.stdin.readline()
"""
NAMES = {
    "invalid": b"EngineCore\xff",          # not UTF-8: one ill-formed byte
    "twice": b"EngineCore\xff\xfe",        # two
    "valid": "EngineCoreé".encode(),       # UTF-8, a 2-byte character
    "control": b"\x1b[2J\tc2c\nesc",       # clears the screen, adds a column and a row if printed raw
}


def policy(name="c2c-names", comm=r"^EngineCore.$", title=r"^VLLM::Engine\x{FFFD}$"):
    return pb.Policy(node=pb.NodeSchedulingPolicy(name=name, node_names=["c2c-test-node"], command_regex=comm,
                                                  process_regex=title, priority=1, execution_time_ns=2_000_000))


class NamesAreBytes(unittest.TestCase):
    def setUp(self):
        reason = skip_reason()
        if reason:
            self.skipTest(reason)
        self.d = Daemon("names").start()
        self.p = subprocess.Popen([TITLE, "-c", NAMER] + [n.hex() for n in NAMES.values()], executable=sys.executable,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        words = self.p.stdout.readline().split()
        self.assertEqual(words[:1], [b"ready"], words)
        self.tid = dict(zip(NAMES, (int(w) for w in words[1:])))
        self.pid = self.p.pid
        self.rest = None

    def tearDown(self):
        if getattr(self, "rest", None):
            self.rest.terminate()
            self.rest.wait(timeout=10)
        if hasattr(self, "p") and self.p.poll() is None:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        if hasattr(self, "p"):
            self.p.stdout.close()
        if hasattr(self, "d"):
            sys.stderr.write("--- daemon log (tail) ---\n" + "\n".join(self.d.read_log().splitlines()[-15:]) + "\n")
            self.d.cleanup()

    def cli(self, *args):
        r = subprocess.run([CLI, *args, "--socket", self.d.socket], capture_output=True, timeout=30)
        return r.returncode, r.stdout, r.stderr

    def assertNoRawBytes(self, out, what):
        self.assertNotIn(b"\x1b", out, what + ": a raw ESC reaches the terminal")
        self.assertNotIn(b"\t", out, what + ": a raw tab adds a column")
        self.assertNotIn(b"\xff", out, what + ": raw invalid bytes")
        out.decode("utf-8")  # the whole output is UTF-8

    def test_names_that_are_not_utf8_are_listed_matched_and_rendered_by_every_front_end(self):
        d, tid = self.d, self.tid
        # The daemon has seen every thread by its final name (task events: fork, then rename).
        def seen():
            got = {t.tid: t for t in d.call("ListTasks", pb.ListTasksRequest(tgid=self.pid)).tasks}
            return got if all(tid[k] in got and got[tid[k]].comm == NAMES[k] for k in NAMES) else None
        tasks = wait_for(seen, timeout=15)
        self.assertTrue(tasks, "ListTasks answers with every thread by its name (bytes)")
        for k in NAMES:
            self.assertEqual(tasks[tid[k]].title, TITLE, k)
        # A regex matches the name's text: one ill-formed part is one U+FFFD character.
        by_regex = {t.tid for t in d.call("ListTasks", pb.ListTasksRequest(
            comm_regex=r"^EngineCore\x{FFFD}$", tgid=self.pid)).tasks}
        self.assertEqual(by_regex, {tid["invalid"]})
        by_regex = {t.tid for t in d.call("ListTasks", pb.ListTasksRequest(
            comm_regex=r"^EngineCore.$", title_regex=r"^VLLM::Engine.$", tgid=self.pid)).tasks}
        self.assertEqual(by_regex, {tid["invalid"], tid["valid"]})

        pv = d.call("Preview", pb.PreviewRequest(policy=policy()))
        self.assertEqual({m.tid for m in pv.matched}, {tid["invalid"], tid["valid"]}, pv)
        self.assertEqual({m.comm for m in pv.matched}, {NAMES["invalid"], NAMES["valid"]})
        d.call("UpsertPolicy", pb.UpsertPolicyRequest(policy=policy()))
        self.assertTrue(wait_for(lambda: {tid["invalid"], tid["valid"]} <= set(d.map_entries()), timeout=10),
                        "the policy's entries reach the pinned map")
        self.assertFalse({tid["twice"], tid["control"]} & set(d.map_entries()))
        self.assertTrue(wait_applied(d, "c2c-names"))
        lin = d.call("Explain", pb.ExplainRequest(tid=tid["invalid"])).lineage
        self.assertEqual((lin.comm, lin.title), (NAMES["invalid"], TITLE))

        if not CLI:
            self.skipTest("C2C_CLI not set: the CLI's part is skipped")
        code, out, err = self.cli("get", "tasks", "--tgid", str(self.pid), "-o", "wide")
        self.assertEqual(code, 0, err)
        self.assertNoRawBytes(out, "get tasks")
        self.assertIn(b"EngineCore\\xff ", out)
        self.assertIn(b"EngineCore\\xff\\xfe", out)
        self.assertIn("EngineCoreé".encode(), out)
        self.assertIn(b"\\x1b[2J\\x09c2c\\x0aesc", out)
        self.assertIn(b"VLLM::Engine\\xfe", out)
        self.assertEqual(out.count(b"\n"), 1 + len(NAMES) + 1, out)  # header, the threads, the main thread
        for fmt, load in (("json", json.loads), ("yaml", yaml.safe_load)):
            code, out, err = self.cli("get", "tasks", "--tgid", str(self.pid), "-o", fmt)
            self.assertEqual(code, 0, err)
            self.assertNoRawBytes(out, "get tasks -o " + fmt)
            items = {t["tid"]: t for t in load(out.decode())["items"]}
            self.assertEqual(items[tid["invalid"]]["comm"], "EngineCore" + FFFD, fmt)
            self.assertEqual(items[tid["twice"]]["comm"], "EngineCore" + FFFD + FFFD, fmt)
            self.assertEqual(items[tid["valid"]]["comm"], "EngineCoreé", fmt)
            self.assertEqual(items[tid["control"]]["comm"], "\x1b[2J\tc2c\nesc", fmt)
            self.assertEqual(items[tid["invalid"]]["title"], "VLLM::Engine" + FFFD, fmt)
        code, out, err = self.cli("explain", str(tid["invalid"]))
        self.assertEqual(code, 0, err)
        self.assertNoRawBytes(out, "explain")
        self.assertIn(b"comm 'EngineCore\\xff'", out)

        if not REST:
            self.skipTest("C2C_REST not set: the REST part is skipped")
        self.rest, get = rest_env.gateway_on(REST, d.socket, d.root)
        self.assertTrue(wait_for(lambda: get("/health"), timeout=20), "claim2core-rest answers")
        status, body = get("/api/v1/tasks")
        self.assertEqual(status, 200, body[:300])
        rows = {t["tid"]: t for t in json.loads(body)["data"]["tasks"]}
        self.assertEqual(rows[tid["invalid"]]["comm"], "EngineCore" + FFFD)
        self.assertEqual(rows[tid["invalid"]]["title"], "VLLM::Engine" + FFFD)
        self.assertEqual(rows[tid["invalid"]]["policy"], "NodeSchedulingPolicy/c2c-names")
        status, body = get("/api/v1/tasks/%d/explain" % tid["invalid"])
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(json.loads(body)["data"]["lineage"]["comm"], "EngineCore" + FFFD)


if __name__ == "__main__":
    unittest.main(verbosity=2)
