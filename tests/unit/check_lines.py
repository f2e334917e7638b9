"""One "ok   what" / "FAIL what" line per check, and the exit status they add up to, for the Python
test scripts (imported from their directory or with tests/unit on sys.path)."""
import sys

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def finish(success_line=None):
    """Exit 1 with the count when a check failed; else print success_line (if any)."""
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    if success_line:
        print(success_line)
