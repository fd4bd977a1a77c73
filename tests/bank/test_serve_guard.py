"""``fr serve`` does not trust the network (issue 40, item 6): over HTTP every request carries
the server's bearer token (401 otherwise), ``--no-auth`` is refused off loopback, and on every
transport one call is at most ``--max-call-bytes`` (default 8 MiB), refused in one line naming the
limit without the server holding the rest of it."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.paths import ROOT

from frcore.bank.serve import DEFAULT_MAX_CALL_BYTES, TOKEN_ENV, HttpGuard, http_token, is_loopback, read_token_file

ROOT = ROOT
FR = [sys.executable, "-c", "import sys; from frcore.cli import main; sys.exit(main())"]
FACT = {"id": "f1", "text": "I live in Porto.", "said_at": "2025-01-02", "categories": {"IDENTITY_SELF_CONCEPT": 1.0}}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    env.update(extra)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _peak_rss_kib(pid: int) -> int:
    """The process's peak resident set (``VmHWM``), KiB."""
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", text, re.M).group(1))


# ----------------------------------------------------------------------------- token sources, loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.2.1", "::1", "localhost", "[::1]"])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "10.0.0.1", "example.org", "localhost.example.org"])
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback(host)


class _Args:
    def __init__(self, no_auth=False, token_file=None):
        self.no_auth, self.token_file = no_auth, token_file


def test_token_sources(tmp_path):
    f = tmp_path / "token"
    f.write_text("s3cret-token-of-enough-length\n")
    os.chmod(f, 0o600)
    assert http_token(_Args(token_file=str(f)), "0.0.0.0", {TOKEN_ENV: "y" * 20}) == (
        "s3cret-token-of-enough-length",
        f"--token-file {f}",
    )
    assert http_token(_Args(), "0.0.0.0", {TOKEN_ENV: "y" * 20}) == ("y" * 20, TOKEN_ENV)
    token, source = http_token(_Args(), "0.0.0.0", {})
    assert source == "generated" and len(token) >= 40
    assert http_token(_Args(), "0.0.0.0", {})[0] != token  # a new one each run
    assert http_token(_Args(no_auth=True), "127.0.0.1", {}) == (None, "--no-auth")
    with pytest.raises(ValueError, match="at least 16"):
        http_token(_Args(), "127.0.0.1", {TOKEN_ENV: "short"})


def test_a_token_file_others_can_read_is_refused(tmp_path):
    f = tmp_path / "token"
    f.write_text("s3cret-token-of-enough-length\n")
    os.chmod(f, 0o644)
    with pytest.raises(ValueError, match=r"--token-file .*mode 0644.*chmod 600"):
        read_token_file(str(f))
    os.chmod(f, 0o600)
    assert read_token_file(str(f)) == "s3cret-token-of-enough-length"
    with pytest.raises(ValueError, match="--token-file"):
        read_token_file(str(tmp_path / "missing"))


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "[::]"])
def test_no_auth_off_loopback_is_refused_in_one_line(tmp_path, host):
    bank = tmp_path / "never.db"
    out = subprocess.run(
        [*FR, "serve", "--bank", str(bank), "--http", f"{host}:0", "--no-auth"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "--no-auth" in out.stderr and "loopback" in out.stderr
    assert not bank.exists()


def test_token_options_without_http_are_refused(tmp_path, capsys):
    from frcore.cli import main

    bank = tmp_path / "never.db"
    assert main(["serve", "--bank", str(bank), "--no-auth"]) == 2
    assert "--no-auth" in capsys.readouterr().err
    assert main(["serve", "--bank", str(bank), "--http", "0", "--max-call-bytes", "12"]) == 2
    assert "--max-call-bytes" in capsys.readouterr().err
    assert not bank.exists()


# ----------------------------------------------------------------------------- the ASGI guard, in process


def _asgi(guard: HttpGuard, headers: dict[str, str], body_chunks: list[bytes]) -> tuple[int, bytes, int]:
    """Status, body and the bytes the guard read, for one request through ``guard``."""
    import anyio

    sent: list[dict] = []
    queue = [
        {"type": "http.request", "body": c, "more_body": i < len(body_chunks) - 1} for i, c in enumerate(body_chunks)
    ]
    read = [0]

    async def receive():
        m = queue.pop(0) if queue else {"type": "http.disconnect"}
        read[0] += len(m.get("body", b""))
        return m

    async def send(m):
        sent.append(m)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    anyio.run(guard, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"), read[0]


async def _echo(scope, receive, send):
    body = b""
    while True:
        m = await receive()
        body += m.get("body", b"")
        if not m.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": str(len(body)).encode()})


def test_guard_asks_for_the_token_and_bounds_the_body():
    token = "t" * 32
    guard = HttpGuard(_echo, token, max_bytes=1000)
    ok = {"Authorization": f"Bearer {token}"}
    assert _asgi(guard, {}, [b"{}"])[0] == 401
    assert _asgi(guard, {"Authorization": "Bearer " + "u" * 32}, [b"{}"])[0] == 401
    assert _asgi(guard, {"Authorization": token}, [b"{}"])[0] == 401  # no scheme
    assert _asgi(guard, {"Authorization": f"Basic {token}"}, [b"{}"])[0] == 401
    assert _asgi(guard, {"Authorization": f"bearer {token}"}, [b"{}"])[:2] == (200, b"2")
    assert _asgi(guard, ok, [b"x" * 600, b"x" * 400])[:2] == (200, b"1000")
    # declared too large: refused before a byte of the body is read
    status, body, read = _asgi(guard, {**ok, "Content-Length": "5000"}, [b"x" * 5000])
    assert status == 413 and read == 0 and "at most 1,000 in one call" in json.loads(body)["error"]["message"]
    # streamed (no length): refused once it passes the limit, the rest never read
    status, body, read = _asgi(guard, ok, [b"x" * 600] * 10)
    assert status == 413 and read <= 1200 and "--max-call-bytes" in body.decode()
    assert _asgi(HttpGuard(_echo, None, 1000), {}, [b"{}"])[:2] == (200, b"2")  # --no-auth


# ----------------------------------------------------------------------------- a real HTTP server


@contextlib.contextmanager
def _http_server(tmp_path, *extra: str, env: dict[str, str] | None = None):
    port = _free_port()
    proc = subprocess.Popen(
        [*FR, "serve", "--bank", str(tmp_path / "h.db"), "--embedder", "hash", "--http", f"127.0.0.1:{port}", *extra],
        cwd=ROOT,
        env=env or _env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "the HTTP server did not start listening"
            time.sleep(0.2)
        yield port, proc, lines
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(10)
        if proc.stderr:
            proc.stderr.close()


def _post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        c.request("POST", "/mcp", body=body, headers={**ACCEPT, **headers})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def test_http_asks_every_request_for_the_generated_token(tmp_path):
    """No token source: one is generated and printed once to stderr; without it, or with another,
    401; with it, the MCP SDK's client works; a body over the limit is 413 naming it, refused on
    its declared length without being read."""
    import anyio

    from frcore.bank.serve import http_client

    with _http_server(tmp_path) as (port, proc, lines):
        said = "".join(lines)
        (token,) = re.findall(r"Authorization: Bearer (\S+?)'", said)
        assert said.count(token) == 1 and len(token) >= 40
        init = json.dumps(INIT).encode()
        assert _post(port, init, {})[0] == 401
        assert _post(port, init, {"Authorization": "Bearer " + "A" * len(token)})[0] == 401
        status, _ = _post(port, init, {"Authorization": f"Bearer {token}"})
        assert status == 200
        got: dict = {}

        async def main():
            with anyio.fail_after(60):
                async with http_client(f"http://127.0.0.1:{port}/mcp", token) as client:
                    await client.call_tool("remember", {"facts": [FACT]})
                    r = await client.call_tool("recall", {"text": "where do I live?", "at": "2025-04-01"})
                    got["recall"] = r.structured_content

        anyio.run(main)
        assert got["recall"]["results"][0]["id"] == "f1"
        before = _peak_rss_kib(proc.pid)
        # 64 MiB declared: refused at once (the body is never sent)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.putrequest("POST", "/mcp")
        for k, v in {**ACCEPT, "Authorization": f"Bearer {token}", "Content-Length": str(64 << 20)}.items():
            c.putheader(k, v)
        c.endheaders()
        r = c.getresponse()
        assert r.status == 413
        message = json.loads(r.read())["error"]["message"]
        assert f"at most {DEFAULT_MAX_CALL_BYTES:,} in one call" in message and "--max-call-bytes" in message
        c.close()
        # streamed without a length: refused once past the limit
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.putrequest("POST", "/mcp")
        for k, v in {**ACCEPT, "Authorization": f"Bearer {token}", "Transfer-Encoding": "chunked"}.items():
            c.putheader(k, v)
        c.endheaders()
        piece = b"x" * (1 << 20)
        with contextlib.suppress(OSError):
            for _ in range(40):
                c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        r = c.getresponse()
        assert r.status == 413 and f"{DEFAULT_MAX_CALL_BYTES:,}" in r.read().decode()
        c.close()
        grew = _peak_rss_kib(proc.pid) - before
        assert grew < 64 * 1024, f"the server's peak memory grew by {grew} KiB for refused bodies"


def test_no_auth_on_loopback_serves_without_a_token(tmp_path):
    with _http_server(tmp_path, "--no-auth") as (port, _, lines):
        assert _post(port, json.dumps(INIT).encode(), {})[0] == 200
        assert "Bearer" not in "".join(lines)


# ----------------------------------------------------------------------------- stdio


def test_stdio_refuses_an_oversized_call_without_holding_it(tmp_path):
    """A 64 MiB ``remember`` line over stdio with --max-call-bytes 1 MiB: one JSON-RPC error for
    its id naming the limit, the server's peak memory not grown by the line, and the next call
    answered."""
    proc = subprocess.Popen(
        [*FR, "serve", "--bank", str(tmp_path / "s.db"), "--embedder", "hash", "--max-call-bytes", str(1 << 20)],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout

    def send(message: dict | bytes) -> None:
        proc.stdin.write(message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def answer() -> dict:
        line = proc.stdout.readline()
        assert line, proc.stderr.read().decode() if proc.stderr else ""
        return json.loads(line)

    def call(i: int, name: str, args: dict) -> dict:
        return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}

    try:
        send(INIT)
        assert answer()["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(call(2, "remember", {"facts": [FACT]}))
        assert answer()["result"]["structuredContent"]["added"] == ["f1"]
        before = _peak_rss_kib(proc.pid)
        facts = [{**FACT, "id": f"g{i}", "text": "y" * 62_000} for i in range(1_100)]
        huge = json.dumps(call(3, "remember", {"facts": facts})).encode() + b"\n"
        assert len(huge) > 64 << 20
        writer = threading.Thread(target=send, args=(huge,), daemon=True)
        writer.start()
        refused = answer()
        writer.join(120)
        assert refused["id"] == 3, refused
        message = refused["error"]["message"]
        assert f"message of {len(huge):,} bytes; at most {1 << 20:,} in one call" in message, message
        assert "--max-call-bytes" in message
        grew = _peak_rss_kib(proc.pid) - before
        assert grew < 32 * 1024, f"the server's peak memory grew by {grew} KiB for a refused message"
        send(call(4, "recall", {"text": "where do I live?", "at": "2025-04-01"}))
        got = answer()
        assert got["id"] == 4 and got["result"]["structuredContent"]["results"][0]["id"] == "f1"
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


def test_the_limits_and_auth_are_documented():
    doc = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
    assert f"{DEFAULT_MAX_CALL_BYTES:,}" in doc and "--max-call-bytes" in doc
    for word in ("--token-file", TOKEN_ENV, "--no-auth", "## Authentication", "0.0.0.0"):
        assert word in doc, word
    for line in doc.splitlines():  # no example binds every interface without a token
        if "--http 0.0.0.0" in line:
            assert "--token-file" in line or TOKEN_ENV in line, line
