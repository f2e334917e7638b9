#!/usr/bin/python3
"""The unprivileged side of role_socket_attack_test.py: run as another uid (setpriv), it does one
thing to the role socket and prints what it saw as one JSON line. Every load is bounded in count
and time.

usage: role_attacker.py ROLE_SOCKET hold N SECONDS     open N connections, send one request on each
                                                        (CLEAR of this thread: an accepted connection
                                                        answers OK), report each one's first reply
                                                        line (a refusal or OK) and then, while holding
                                                        them for SECONDS, which were closed by the
                                                        daemon (idle timeout) and when
       role_attacker.py ROLE_SOCKET line HEXLINE        one request line (hex, so any byte can be
                                                        sent; {tid}: this thread's id); the reply
       role_attacker.py ROLE_SOCKET flood CONNS LINES SECONDS
                                                        at most LINES requests over CONNS
                                                        connections for at most SECONDS, replies read
                                                        as they come; counts per reply code
       role_attacker.py ROLE_SOCKET client              clients/python's register_role for this thread:
                                                        its result, or the error's code and message
       role_attacker.py ROLE_SOCKET reuse DIR           connect, one request (CLEAR of its own
                                                        thread, answered), fork, exit: the child keeps the
                                                        connection, waits for DIR/target (a tid),
                                                        sends SET <tid> 0 stolen and writes the reply
                                                        to DIR/reply
"""
import json
import os
import select
import socket
import sys
import threading
import time

path, cmd = sys.argv[1], sys.argv[2]


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def first_line(s, timeout):
    """The first reply line within `timeout` ("" if none), and whether the socket then ended."""
    data = b""
    end = time.time() + timeout
    while b"\n" not in data and time.time() < end:
        r, _, _ = select.select([s], [], [], max(0.0, end - time.time()))
        if not r:
            break
        chunk = s.recv(4096)
        if not chunk:
            return data.decode(errors="replace"), True
        data += chunk
    return data.decode(errors="replace").split("\n")[0], False


if cmd == "hold":
    n, seconds = int(sys.argv[3]), float(sys.argv[4])
    conns = []
    for _ in range(n):
        try:
            conns.append(connect())
        except OSError as e:
            conns.append(None)
            print(json.dumps({"connect_error": str(e)}), file=sys.stderr)
    probe = f"C2C-ROLE/1 CLEAR {threading.get_native_id()} 0\n".encode()
    for s in conns:
        if s is not None:
            try:
                s.sendall(probe)
            except OSError:
                pass  # refused and closed already: its ERR line is still there to read
    # Every connection answers, accepted or refused: no timing guess (a loaded host is slow).
    first = [first_line(s, 10)[0] if s is not None else "connect failed" for s in conns]
    print(json.dumps({"first": first}), flush=True)
    # Hold the open ones; note when the daemon ends each (its idle timeout, from its reply).
    t0 = time.time()
    open_ = [s for s, f in zip(conns, first) if s is not None and f.startswith("OK ")]
    closed = []
    while open_ and time.time() - t0 < seconds:
        r, _, _ = select.select(open_, [], [], max(0.0, seconds - (time.time() - t0)))
        for s in r:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            line = data.decode(errors="replace").split("\n")[0]
            closed.append({"after": round(time.time() - t0, 2), "line": line})
            if not data or data.endswith(b"\n"):
                open_.remove(s)
    print(json.dumps({"closed": closed, "still_open": len(open_)}), flush=True)
    sys.stdin.readline()  # hold the rest until told

elif cmd == "line":
    s = connect()
    s.sendall(bytes.fromhex(sys.argv[3]).replace(b"{tid}", str(threading.get_native_id()).encode()) + b"\n")
    line, _ = first_line(s, 10)
    print(json.dumps({"reply": line}), flush=True)

elif cmd == "flood":
    conns, lines, seconds = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    tid = threading.get_native_id()
    counts, lock = {}, threading.Lock()
    end = time.time() + seconds

    def one(k, share):
        s = connect()
        s.settimeout(1.0)
        done = threading.Event()

        def reader():
            buf = b""
            while not done.is_set() or buf:
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    if done.is_set():
                        break
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                *full, buf = buf.split(b"\n")
                with lock:
                    for ln in full:
                        code = ln.split(b" ")[1].decode() if ln.startswith(b"ERR ") else "OK"
                        counts[code] = counts.get(code, 0) + 1
        t = threading.Thread(target=reader)
        t.start()
        batch = b"".join(f"C2C-ROLE/1 SET {tid} 0 {'ab'[i % 2]}{k}\n".encode() for i in range(200))
        sent = 0
        try:
            while sent < share and time.time() < end:
                s.sendall(batch)
                sent += 200
        except OSError:
            pass
        with lock:
            counts["sent"] = counts.get("sent", 0) + sent
        time.sleep(0.5)  # the last replies
        done.set()
        t.join()
        s.close()

    ts = [threading.Thread(target=one, args=(k, lines // conns)) for k in range(conns)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    counts["seconds"] = round(time.time() - t0, 2)
    print(json.dumps(counts), flush=True)

elif cmd == "client":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
    import claim2core_role
    try:
        print(json.dumps({"ok": claim2core_role.register_role("mine", socket_path=path)}), flush=True)
    except claim2core_role.RoleError as e:
        print(json.dumps({"code": e.code, "error": str(e)}), flush=True)

elif cmd == "reuse":
    d = sys.argv[3]
    s = connect()
    # One answered request first, so the daemon has accepted the connection and bound it to this
    # process (pidfd or start time) before it exits: the child's request is then judged by that
    # binding, not refused at accept because its connecting process was already gone.
    s.sendall(f"C2C-ROLE/1 CLEAR {os.getpid()} 0\n".encode())
    first_line(s, 10)
    if os.fork() == 0:
        # The child: the connection outlives the process that opened it.
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the test reads the parent's stdout to its end
            os.dup2(devnull, fd)
        target = os.path.join(d, "target")
        deadline = time.time() + 30
        while not os.path.exists(target) and time.time() < deadline:
            time.sleep(0.02)
        tid = int(open(target).read())
        s.sendall(f"C2C-ROLE/1 SET {tid} 0 stolen\n".encode())
        line, _ = first_line(s, 10)
        with open(os.path.join(d, "reply.tmp"), "w") as f:
            f.write(line)
        os.rename(os.path.join(d, "reply.tmp"), os.path.join(d, "reply"))
        os._exit(0)
    print(json.dumps({"pid": os.getpid()}), flush=True)
    os._exit(0)  # the connecting process exits: its pid is free once reaped
