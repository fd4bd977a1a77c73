"""The ``fr`` console script's warm path: ``fr bank query|explain BANK ...`` answered by a warm
server (``fr bank serve-local BANK``, :mod:`frcore.bank.warm`) over a Unix socket, as ``dmypy``
serves ``mypy``; every other command, and a query no server answers, runs cold
(:func:`frcore.cli.run`).

This package imports the standard library only: neither :mod:`frcore` (whose ``__init__``
imports JAX) nor NumPy. The socket of a bank is ``<runtime dir>/<sha256 of its real path>.sock``
(:func:`socket_path`), in a directory of mode 0700 owned by the user (:func:`runtime_dir`); the
socket itself is mode 0600. A missing socket, a dead server, a server that declines (another
bank, an argument it cannot judge) or any error of the exchange falls back to the cold path
silently. The client waits at most :data:`HANDSHAKE_TIMEOUT_S` (1 s) for the connection and the
server's :data:`HELLO`, then up to :data:`CLIENT_TIMEOUT_S` for the answer: a stopped or hung
server costs a query 1 s, never a long query its answer. ``FR_NO_WARM=1`` skips the warm path.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
import time

#: the environment variable that turns the warm path off (``FR_NO_WARM=1``)
NO_WARM_ENV = "FR_NO_WARM"
#: the environment variable naming the runtime directory (default ``$XDG_RUNTIME_DIR/frcore`` or ``/tmp/frcore-UID``)
RUNTIME_DIR_ENV = "FR_RUNTIME_DIR"
#: the ``fr`` commands a warm server answers
WARM_COMMANDS = (("bank", "query"), ("bank", "explain"))
#: seconds the client waits for a warm answer, once the server has said :data:`HELLO`, before it runs cold
CLIENT_TIMEOUT_S = 30.0
#: seconds the client waits for the connection and the server's :data:`HELLO` together: a server
#: that is stopped, hung, or busy with another request that long is passed by (the client runs cold)
HANDSHAKE_TIMEOUT_S = 1.0
#: seconds the server waits for a client's request, and for the client to take its answer
SERVER_TIMEOUT_S = 5.0
#: what the server sends as soon as it has accepted a connection, before it reads the request
HELLO = b"fr-warm 1\n"
#: the largest message either side reads (bytes)
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def runtime_dir(create: bool = False) -> str | None:
    """The directory of the warm servers' sockets: ``$FR_RUNTIME_DIR``, else
    ``$XDG_RUNTIME_DIR/frcore``, else ``/tmp/frcore-UID``; ``None`` unless it is a directory
    owned by this user with no permission for group or others (``create``: made with mode 0700)."""
    d = os.environ.get(RUNTIME_DIR_ENV)
    if not d:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        d = os.path.join(xdg, "frcore") if xdg else os.path.join("/tmp", f"frcore-{os.getuid()}")
    if create:
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(d)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return d


def bank_key(bank: str) -> str:
    """The name a bank's socket and pidfile share: the SHA-256 of its real path (32 hex digits)."""
    return hashlib.sha256(os.path.realpath(bank).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def socket_path(bank: str, create: bool = False) -> str | None:
    """The Unix socket a warm server of ``bank`` listens on (``None`` without a usable runtime dir)."""
    d = runtime_dir(create=create)
    return None if d is None else os.path.join(d, bank_key(bank) + ".sock")


def pid_path(bank: str) -> str | None:
    """The pidfile beside :func:`socket_path`."""
    d = runtime_dir()
    return None if d is None else os.path.join(d, bank_key(bank) + ".pid")


#: the environment variables, by prefix, that can change an answer (frcore's, JAX's, XLA's) and ``TZ``
ANSWER_ENV_PREFIXES = ("FR_", "FRCORE_", "JAX_", "XLA_")


def answer_environment(environ) -> dict[str, str]:
    """The variables of an environment that can change a command's answer: those starting with
    one of :data:`ANSWER_ENV_PREFIXES`, and ``TZ``, all but :data:`NO_WARM_ENV` and
    :data:`RUNTIME_DIR_ENV` (the warm path's own)."""
    return {
        k: v
        for k, v in environ.items()
        if (k == "TZ" or k.startswith(ANSWER_ENV_PREFIXES)) and k not in (NO_WARM_ENV, RUNTIME_DIR_ENV)
    }


def send(sock: socket.socket, message: dict) -> None:
    """One message: JSON, then the end of the writing half."""
    sock.sendall(json.dumps(message).encode("utf-8"))
    sock.shutdown(socket.SHUT_WR)


def receive(sock: socket.socket) -> dict:
    """The message of the other side (read until it closes; at most :data:`MAX_MESSAGE_BYTES`)."""
    chunks, size = [], 0
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_MESSAGE_BYTES:
            raise ValueError("message too large")
        chunks.append(chunk)
    value = json.loads(b"".join(chunks).decode("utf-8"))
    if not isinstance(value, dict):
        raise ValueError("message is not an object")
    return value


def handshake(sock: socket.socket, path: str, timeout: float = HANDSHAKE_TIMEOUT_S) -> None:
    """Connect ``sock`` to the server at ``path`` and read its :data:`HELLO`, both within
    ``timeout`` seconds (``OSError``: ``TimeoutError`` when nothing answers in time; ``ValueError``
    for another greeting)."""
    deadline = time.monotonic() + timeout
    sock.settimeout(timeout)
    sock.connect(path)
    got = b""
    while len(got) < len(HELLO):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no hello from the warm server")
        sock.settimeout(left)
        chunk = sock.recv(len(HELLO) - len(got))
        if not chunk:
            raise ConnectionError("the warm server closed the connection before its hello")
        got += chunk
    if got != HELLO:
        raise ValueError("not a warm server's hello")


def _candidate_banks(argv: list[str], cwd: str) -> list[str]:
    """The arguments after ``bank query|explain`` that could be the bank: existing files
    (relative to ``cwd``), not options; the server parses the command line itself and checks
    that it names its bank."""
    paths = (os.path.join(cwd, a) for a in argv[2:] if not a.startswith("-"))
    return [p for p in paths if os.path.isfile(p)]


def warm_answer(argv: list[str], cwd: str | None = None) -> dict | None:
    """The warm server's answer to ``fr ARGV`` (``{"rc", "stdout", "stderr"}``), or ``None``: not
    a warm command, no server, a server that declines, or any failure of the exchange."""
    if os.environ.get(NO_WARM_ENV) or tuple(argv[:2]) not in WARM_COMMANDS:
        return None
    cwd = os.getcwd() if cwd is None else cwd
    for bank in _candidate_banks(argv, cwd):
        path = socket_path(bank)
        if path is None or not os.path.exists(path):
            continue
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                handshake(sock, path)  # at most HANDSHAKE_TIMEOUT_S on a server that does not answer
                sock.settimeout(CLIENT_TIMEOUT_S)  # then a slow answer is waited for
                send(sock, {"argv": list(argv), "cwd": cwd, "env": answer_environment(os.environ)})
                answer = receive(sock)
        except (OSError, ValueError):  # a stale socket, a dead or hung server, a broken answer
            continue
        if answer.get("declined") is None and isinstance(answer.get("rc"), int):
            return answer
    return None


def run() -> int:
    """The ``fr`` console script: the warm answer when a server gives one, else :func:`frcore.cli.run`."""
    answer = warm_answer(sys.argv[1:])
    if answer is None:
        from frcore.cli import run as cold

        return cold()
    try:
        sys.stdout.write(str(answer.get("stdout", "")))
        sys.stdout.flush()
        sys.stderr.write(str(answer.get("stderr", "")))
    except BrokenPipeError:
        return 141
    return int(answer["rc"])


if __name__ == "__main__":
    sys.exit(run())
