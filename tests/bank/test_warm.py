"""The warm path of ``fr bank query|explain`` (:mod:`frcore_warm`, ``fr bank serve-local``): the
same answers as the cold path, a write after the server started seen, only its own bank
answered, a stale socket or dead server falling back to the cold path, a private socket; and the
client imports neither JAX, NumPy nor frcore. Every server a test starts is stopped in
``finally``, and its socket and pidfile are gone afterwards (checked)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import ROOT

import frcore_warm
from frcore.bank import Bank

ROOT = ROOT
AT = "2025-06-01"
FACTS = [
    {"id": "f1", "text": "I live in Lisbon.", "said_at": "2024-01-02", "categories": {"IDENTITY_SELF_CONCEPT": 1.0}},
    {
        "id": "f2",
        "text": "My dentist appointment is on Friday.",
        "said_at": "2025-05-01",
        "categories": {"HEALTH_WELLBEING": 1.0},
    },
    {
        "id": "f3",
        "text": "I am reading about topology.",
        "said_at": "2025-03-01",
        "categories": {"INTELLECTUAL_INTERESTS": 1.0},
    },
]
LATER = {"id": "f4", "text": "I moved to Porto.", "said_at": "2025-05-20", "categories": {"IDENTITY_SELF_CONCEPT": 1.0}}


def _env(runtime: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in frcore_warm.answer_environment(os.environ)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env[frcore_warm.RUNTIME_DIR_ENV] = str(runtime)
    env.update(extra)
    return env


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    d = tmp_path / "rt"
    d.mkdir(mode=0o700)
    for k in frcore_warm.answer_environment(os.environ):
        monkeypatch.delenv(k)
    monkeypatch.setenv(frcore_warm.RUNTIME_DIR_ENV, str(d))
    return d


def _bank(path: Path, facts=FACTS) -> Path:
    with Bank.open(str(path), embedder="hash") as bank:
        bank.add(facts)
    return path


class Server:
    """``fr bank serve-local BANK`` in a child process, stopped (and checked gone) on exit."""

    def __init__(self, bank: Path, runtime: Path) -> None:
        self.bank, self.runtime = bank, runtime
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "frcore.cli", "bank", "serve-local", str(bank)],
            env=_env(runtime),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __enter__(self) -> Server:
        try:
            sock = frcore_warm.socket_path(str(self.bank))
            assert sock is not None
            self.socket = sock
            deadline = time.monotonic() + 300
            pid = frcore_warm.pid_path(str(self.bank))
            while not (os.path.exists(sock) and pid is not None and os.path.exists(pid)):
                assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()

    def __exit__(self, *exc) -> None:
        self.stop()
        assert not list(self.runtime.iterdir()), "the server left its socket or pidfile"


def _cold(argv: list[str], runtime: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``fr ARGV`` through the console script with the warm path off."""
    return subprocess.run(
        [sys.executable, "-m", "frcore_warm", *argv],
        env=_env(runtime, FR_NO_WARM="1"),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def test_warm_answers_equal_the_cold_path_and_see_later_writes(tmp_path, runtime):
    bank = _bank(tmp_path / "b.db")
    commands = [
        ["bank", "query", str(bank), "where do I live", "--at", AT, "--json"],
        ["bank", "query", str(bank), "where do I live", "--at", AT],
        ["bank", "explain", str(bank), "any appointments this week", "--at", AT, "--k", "2"],
        ["bank", "query", "b.db", "what am I reading", "--at", AT, "--json"],  # relative to the client's cwd
    ]
    with Server(bank, runtime) as server:
        st = os.stat(server.socket)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert stat.S_IMODE(os.stat(runtime).st_mode) == 0o700
        for argv in commands:
            warm = frcore_warm.warm_answer(argv, cwd=str(tmp_path))
            assert warm is not None, argv
            cold = _cold(argv, runtime, cwd=tmp_path)
            assert (warm["rc"], warm["stdout"], warm["stderr"]) == (cold.returncode, cold.stdout, cold.stderr), argv
            assert warm["rc"] == 0 and warm["stdout"]
        # the console script itself, warm
        argv = commands[0]
        out = subprocess.run(
            [sys.executable, "-m", "frcore_warm", *argv], env=_env(runtime), capture_output=True, text=True
        )
        assert out.returncode == 0 and out.stdout == _cold(argv, runtime).stdout
        # a fact written after the server started is seen
        with Bank.open(str(bank)) as writer:
            writer.add([LATER])
        argv = ["bank", "query", str(bank), "I moved to Porto", "--at", AT]
        warm = frcore_warm.warm_answer(argv)
        assert warm is not None and LATER["text"] in warm["stdout"]
        assert warm["stdout"] == _cold(argv, runtime).stdout


def _ask(sock_path: str, request: dict) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        frcore_warm.handshake(s, sock_path, timeout=120)
        s.settimeout(120)
        frcore_warm.send(s, request)
        return frcore_warm.receive(s)


def test_server_answers_only_for_its_bank_and_environment(tmp_path, runtime, monkeypatch):
    bank = _bank(tmp_path / "a.db")
    other = _bank(tmp_path / "other.db", FACTS[:1])
    with Server(bank, runtime) as server:
        ask = {"cwd": str(tmp_path), "env": {}}
        mine = _ask(server.socket, {**ask, "argv": ["bank", "query", str(bank), "x", "--at", AT]})
        assert mine.get("rc") == 0
        assert _ask(server.socket, {**ask, "argv": ["bank", "query", str(other), "x"]}) == {"declined": "another bank"}
        assert _ask(server.socket, {**ask, "argv": ["bank", "add", str(bank), "-"]}) == {"declined": "not a query"}
        assert _ask(server.socket, {**ask, "argv": ["bank", "query", str(bank), "x", "--k"]}) == {
            "declined": "another bank"
        }  # does not parse: the cold path reports it
        for differs in ({"FR_ASYNC_DISPATCH": "1"}, {"JAX_ENABLE_X64": "1"}, {"TZ": "Asia/Tokyo"}):
            env = {"cwd": str(tmp_path), "env": differs}
            assert _ask(server.socket, {**env, "argv": ["bank", "query", str(bank), "x"]}) == {
                "declined": "another environment"
            }, differs
        # the client sends what can change an answer: the server's own environment lacks these
        argv = ["bank", "query", str(bank), "x", "--at", AT]
        assert frcore_warm.warm_answer(argv) is not None
        for name, value in (("JAX_ENABLE_X64", "1"), ("FRCORE_CACHE", str(tmp_path)), ("TZ", "Asia/Tokyo")):
            with monkeypatch.context() as m:
                m.setenv(name, value)
                assert frcore_warm.warm_answer(argv) is None, name
        # the client never asks a bank's server about another bank: no socket for it
        assert frcore_warm.warm_answer(["bank", "query", str(other), "x"]) is None
        # a second server for the same bank refuses, in one line, and leaves the first one's socket
        second = subprocess.run(
            [sys.executable, "-m", "frcore.cli", "bank", "serve-local", str(bank)],
            env=_env(runtime),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert second.returncode == 2 and "already answers" in second.stderr, second.stderr
        assert len(second.stderr.strip().splitlines()) == 1 and os.path.exists(server.socket)


def test_stale_socket_and_dead_server_fall_back_to_the_cold_path(tmp_path, runtime):
    bank = _bank(tmp_path / "b.db")
    sock = frcore_warm.socket_path(str(bank))
    assert sock is not None
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        left.bind(sock)  # a socket no server listens on (as a killed server leaves it)
        argv = ["bank", "query", str(bank), "where do I live", "--at", AT, "--json"]
        assert frcore_warm.warm_answer(argv) is None
        out = subprocess.run(
            [sys.executable, "-m", "frcore_warm", *argv], env=_env(runtime), capture_output=True, text=True
        )
        assert out.returncode == 0 and out.stdout == _cold(argv, runtime).stdout and out.stderr == ""
        # a server started over the stale socket replaces it
        with Server(bank, runtime):
            assert frcore_warm.warm_answer(argv) is not None
    finally:
        left.close()
    Path(sock).unlink(missing_ok=True)


def test_runtime_dir_must_be_private(tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir(mode=0o700)
    monkeypatch.setenv(frcore_warm.RUNTIME_DIR_ENV, str(d))
    assert frcore_warm.runtime_dir() == str(d)
    os.chmod(d, 0o755)
    assert frcore_warm.runtime_dir() is None
    assert frcore_warm.socket_path(str(tmp_path / "b.db")) is None
    assert frcore_warm.warm_answer(["bank", "query", str(d), "x"]) is None


def test_not_a_warm_command_is_never_sent(tmp_path, runtime):
    assert frcore_warm.warm_answer(["bank", "add", str(tmp_path), "-"]) is None
    assert frcore_warm.warm_answer(["latency"]) is None


def test_the_client_imports_neither_jax_numpy_nor_frcore():
    code = "import sys, frcore_warm; print(sorted(m for m in ('jax', 'numpy', 'frcore') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], env=_env(Path("/nonexistent")), capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


# ------------------------------------------------------------ a server that does not answer (issue 40)


def _timed_warm_answer(argv: list[str]) -> tuple[dict | None, float]:
    t = time.monotonic()
    got = frcore_warm.warm_answer(argv)
    return got, time.monotonic() - t


def test_a_socket_nobody_accepts_on_costs_at_most_a_second(tmp_path, runtime):
    """Failure 11 of issue 40: a socket that exists but answers nothing (a listener that never
    accepts, as a hung server) made every query wait 31.7 s before running cold."""
    bank = _bank(tmp_path / "b.db")
    sock = frcore_warm.socket_path(str(bank))
    assert sock is not None
    hung = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        hung.bind(sock)
        hung.listen(4)  # connections queue in the kernel; nothing accepts them
        argv = ["bank", "query", str(bank), "where do I live", "--at", AT, "--json"]
        got, took = _timed_warm_answer(argv)
        assert got is None and took < 5, took
        out = subprocess.run(
            [sys.executable, "-m", "frcore_warm", *argv], env=_env(runtime), capture_output=True, text=True
        )
        assert out.returncode == 0 and out.stdout == _cold(argv, runtime).stdout and out.stderr == ""
    finally:
        hung.close()
    Path(sock).unlink(missing_ok=True)


def test_a_slow_answer_after_the_hello_is_waited_for(tmp_path, runtime):
    """The 1 s bound is on the connection and the server's hello only: a query the server takes
    longer over is not cut (a fake server says hello, then answers after 2.5 s)."""
    import threading

    bank = _bank(tmp_path / "b.db")
    sock = frcore_warm.socket_path(str(bank))
    assert sock is not None
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.bind(sock)
    slow.listen(1)

    def serve() -> None:
        conn, _ = slow.accept()
        with conn:
            conn.sendall(frcore_warm.HELLO)
            frcore_warm.receive(conn)
            time.sleep(2.5)
            frcore_warm.send(conn, {"rc": 0, "stdout": "slow but sure\n", "stderr": ""})

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        got, took = _timed_warm_answer(["bank", "query", str(bank), "where do I live"])
        assert got == {"rc": 0, "stdout": "slow but sure\n", "stderr": ""} and took >= 2.5
    finally:
        t.join(10)
        slow.close()
    Path(sock).unlink(missing_ok=True)


def test_a_stopped_server_is_passed_by_within_a_second(tmp_path, runtime):
    """A SIGSTOPped ``serve-local``: queries run cold after at most about a second; once it
    continues, it answers again."""
    import signal

    bank = _bank(tmp_path / "b.db")
    argv = ["bank", "query", str(bank), "where do I live", "--at", AT, "--json"]
    with Server(bank, runtime) as server:
        assert frcore_warm.warm_answer(argv) is not None
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            for _ in range(2):
                got, took = _timed_warm_answer(argv)
                assert got is None and took < 5, took
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        assert frcore_warm.warm_answer(argv) is not None  # the queued connections were let go


# ------------------------------------------------------------ vectors.f32 rewritten in place (issue 40)


def test_vectors_rewritten_in_place_are_verified_again(tmp_path, runtime):
    """Failure 11 of issue 40: a running server checked ``vectors.f32`` by inode only, so rows
    rewritten in place (same file, same size) changed its ranking. After the rewrite the warm
    answer equals the cold path's and the answer before it."""
    import numpy as np

    from frcore.bank.storage._index import VECTORS, index_path

    facts = [*FACTS, LATER, {**LATER, "id": "f5", "text": "My sister lives in Madrid.", "said_at": "2025-05-21"}]
    bank = _bank(tmp_path / "b.db", facts)
    vectors = index_path(os.path.realpath(bank)) / VECTORS
    assert vectors.is_file()
    argv = ["bank", "query", str(bank), "where do I live", "--at", AT, "--json"]
    with Server(bank, runtime):
        first = frcore_warm.warm_answer(argv)
        assert first is not None and first["rc"] == 0
        st = os.stat(vectors)
        data = np.fromfile(vectors, dtype="<f4")
        rows = data.reshape(len(facts), -1)
        with open(vectors, "r+b") as fh:  # the same file, rows in another order
            fh.write(np.ascontiguousarray(rows[::-1]).tobytes())
        after = os.stat(vectors)
        assert (after.st_ino, after.st_size) == (st.st_ino, st.st_size)
        warm = frcore_warm.warm_answer(argv)
        assert warm is not None
        cold = _cold(argv, runtime)
        assert warm["stdout"] == first["stdout"] == cold.stdout
