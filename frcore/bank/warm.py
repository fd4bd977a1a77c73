"""``fr bank serve-local BANK``: a warm process that answers ``fr bank query|explain BANK ...``
for the ``fr`` console script (:mod:`frcore_warm`) over a Unix socket, so a query pays neither
the interpreter's start nor JAX's import and compilation.

Each request is ``{"argv", "cwd", "env"}``; the answer is ``{"rc", "stdout", "stderr"}`` of
:func:`frcore.cli.main` run on that command line here (the cold path's own code, so the same
output), or ``{"declined": reason}`` when the command is not a query of this bank (its real
path differs), its arguments do not parse, or the client's environment differs from the
server's in a variable that can change an answer (:func:`frcore_warm.answer_environment`); the
client then runs cold. Every request opens the bank anew (3 ms on a 1,000-fact bank), so a
write made after the server started is seen; when the index's ``vectors.f32`` is not the file it
was (inode, size, mtime, ctime), the open verifies its rows by digest again
(``BankIndex._verify``). Requests are answered one at a time. The server sends
:data:`frcore_warm.HELLO` as soon as it takes a connection: a client waits 1 s for it (a stopped
or hung server is passed by), then up to 30 s for the answer.

The socket (:func:`frcore_warm.socket_path`) is created with mode 0600 in a directory of mode
0700 owned by the user, with a pidfile beside it; both are removed when the server exits
(SIGTERM, SIGINT). A socket left by a dead server is replaced.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import sys
from typing import Any

import frcore_warm


def _run_captured(argv: list[str], cwd: str) -> dict[str, Any]:
    """``fr ARGV`` run by :func:`frcore.cli.main` in ``cwd``, its stdout and stderr captured."""
    from ..cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse's own exit (``--help``)
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        os.chdir(here)
    return {"rc": int(rc), "stdout": out.getvalue(), "stderr": err.getvalue()}


def _parsed_bank(argv: list[str], cwd: str) -> str | None:
    """The real path of the bank ``fr ARGV`` names, or ``None`` when ARGV does not parse."""
    from ..cli import build_parser, command_entry_points

    parser, failed = build_parser([ep for ep in command_entry_points() if ep.name == argv[0]])
    if failed:
        return None
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            return None
    return os.path.realpath(os.path.join(cwd, args.path))


def answer(request: Any, bank: str) -> dict[str, Any]:
    """The answer to one request for the bank at real path ``bank``."""
    if not isinstance(request, dict):
        return {"declined": "not a request"}
    argv, cwd, env = request.get("argv"), request.get("cwd"), request.get("env", {})
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(cwd, str)):
        return {"declined": "not a request"}
    if tuple(argv[:2]) not in frcore_warm.WARM_COMMANDS:
        return {"declined": "not a query"}
    if not isinstance(env, dict) or env != frcore_warm.answer_environment(os.environ):
        return {"declined": "another environment"}
    if not os.path.isdir(cwd):
        return {"declined": "no such working directory"}
    if _parsed_bank(argv, cwd) != bank:
        return {"declined": "another bank"}
    return _run_captured(argv, cwd)


def _live(path: str) -> bool:
    """Whether a server answers on the socket at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        try:
            s.connect(path)
        except OSError:
            return False
    return True


def _bind(path: str) -> socket.socket:
    """Listen on ``path`` (mode 0600), replacing a socket no server answers on."""
    if os.path.exists(path):
        if _live(path):
            raise ValueError(f"a warm server already answers for this bank on {path}")
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(16)
    return sock


class _Stopped(BaseException):
    """SIGTERM: stop serving (not a ``SystemExit``, which a request's own argparse exit raises)."""


def _stop(signum, frame) -> None:
    raise _Stopped


def serve(bank_path: str, log=None) -> int:
    """Answer queries of the bank at ``bank_path`` on its socket until SIGTERM or SIGINT."""
    from ._bank import Bank

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    bank = os.path.realpath(bank_path)
    Bank.open(bank, readonly=True, create=False).close()  # a missing or broken bank fails here, one line
    path = frcore_warm.socket_path(bank, create=True)
    pidfile = frcore_warm.pid_path(bank)
    if path is None or pidfile is None:
        raise ValueError("no private runtime directory for the socket (set FR_RUNTIME_DIR to a directory of mode 0700)")
    if os.path.exists(path) and _live(path):  # before the warm-up: refused at once
        raise ValueError(f"a warm server already answers for this bank on {path}")
    # the kernel compiled and the embedder loaded before the first request
    _run_captured(["bank", "query", bank, "warm-up", "--k", "1"], os.getcwd())
    signal.signal(signal.SIGTERM, _stop)
    sock = _bind(path)
    try:
        with open(pidfile, "w", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
        log(f"fr bank serve-local: {bank} on {path} (pid {os.getpid()})")
        while True:
            conn, _ = sock.accept()
            with conn:
                try:
                    conn.settimeout(frcore_warm.SERVER_TIMEOUT_S)
                    conn.sendall(frcore_warm.HELLO)  # the client waits 1 s for it, then the answer
                    frcore_warm.send(conn, answer(frcore_warm.receive(conn), bank))
                except (OSError, ValueError):  # the client left, or sent no JSON: nothing to answer
                    pass
    except (KeyboardInterrupt, _Stopped):
        return 0
    finally:
        sock.close()
        for p in (path, pidfile):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p)
