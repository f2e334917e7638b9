"""claim2core_role: register the role of a thread with claim2cored (issue #14). Standard library
only; copy it next to your code.

    import threading, claim2core_role

    def decode_loop():
        claim2core_role.register_role("decode")   # at thread start: this thread is a decode thread
        ...

    threading.Thread(target=decode_loop, name="decode").start()

A DRAExecutionPolicy's `taskRoles[].selector.registeredRole: decode` then matches the thread for as
long as it lives (the role is keyed by (tid, start) and leaves with the thread).

It speaks the role socket's line protocol, version 1 (spec/daemon.md "Task roles"), on
$CLAIM2CORE_ROLE_SOCKET, else /run/claim2core-roles/roles.sock. A process may label only its own
threads (the daemon checks the peer's credentials); root or a uid in allowed_uids may label any.
Refusals raise RoleError with the daemon's code (PermissionError for PERMISSION_DENIED;
RESOURCE_EXHAUSTED: a limit of the role socket, the message names its config key, retry later;
UNAUTHENTICATED: the process that opened the connection has exited, open a new one).
"""
import os
import socket
import threading

PROTOCOL = "C2C-ROLE/1"
SOCKET_ENV = "CLAIM2CORE_ROLE_SOCKET"
DEFAULT_SOCKET = "/run/claim2core-roles/roles.sock"
__version__ = "1"


class RoleError(RuntimeError):
    """The daemon refused: `code` is its gRPC status name (NOT_FOUND, INVALID_ARGUMENT, ...)."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code


class RolePermissionError(RoleError, PermissionError):
    """PERMISSION_DENIED: the thread belongs to another process and the caller is not privileged."""


def register_role(role, tid=None, socket_path=None, timeout=5.0):
    """Registers `role` for thread `tid` (default: the calling thread); an empty role unregisters.
    Returns (tid, start, tgid, changed)."""
    tid = threading.get_native_id() if tid is None else int(tid)
    path = socket_path or os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET
    line = f"{PROTOCOL} SET {tid} 0 {role}\n" if role else f"{PROTOCOL} CLEAR {tid} 0\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        reply = b""
        try:
            s.sendall(line.encode())
        except (BrokenPipeError, ConnectionResetError):
            # The daemon refused the connection (a limit) and closed it: its ERR line is still
            # there to read.
            try:
                reply = s.recv(256, socket.MSG_DONTWAIT)
            except OSError:
                reply = b""
            if not reply.startswith(b"ERR "):
                raise
        while not reply.endswith(b"\n"):
            chunk = s.recv(256)
            if not chunk:
                break
            reply += chunk
    words = reply.decode(errors="replace").strip().split(" ", 2)
    if words[0] == "OK":
        _, rtid, start, tgid, _role, changed = reply.decode().split()
        return int(rtid), int(start), int(tgid), changed == "1"
    if words[0] == "ERR" and len(words) >= 2:
        cls = RolePermissionError if words[1] == "PERMISSION_DENIED" else RoleError
        raise cls(words[1], words[2] if len(words) > 2 else "")
    raise RoleError("PROTOCOL", f"unreadable reply {reply!r}")
