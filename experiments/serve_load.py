"""Load on ``fr serve --http``: concurrent MCP clients remembering, recalling and forgetting.

``python -m experiments.serve_load [--clients 20] [--seconds 30] [--embedder hash] [--out FILE]``
starts ``fr serve --http`` on a new bank on the loopback interface, with a bearer token the
clients send (authentication on, as by default), and runs ``--clients`` MCP
clients at once for ``--seconds`` (at most 60). Each client loops over a fixed mix — remember
(one fact of its own, 40%), recall (40%), forget (one of its own remembered facts, 20%) — chosen
by a seeded generator. Reported, as one JSON object (and to ``--out``): per tool the calls, errors
and the p50 / p99 latency in milliseconds; the calls per second; and the acknowledged
``remember`` calls whose fact is missing from the bank afterwards (read with ``fr bank export``'s
API once the server has stopped); and the status of a request sent without the token (401).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from frcore.bank.serve import TOKEN_ENV

TOOLS = ("remember", "recall", "forget")
MIX = (0.4, 0.4, 0.2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(proc: subprocess.Popen, port: int, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        if proc.poll() is not None:
            raise RuntimeError("fr serve exited before listening")
        if time.monotonic() > deadline:
            raise RuntimeError("fr serve did not start listening")
        time.sleep(0.2)


def _status_without_token(port: int) -> int:
    """The HTTP status of an ``initialize`` sent without the token (401: authentication is on)."""
    import http.client

    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        c.request("POST", "/mcp", body=json.dumps(body), headers=headers)
        return c.getresponse().status
    finally:
        c.close()


async def _client(url: str, token: str, i: int, until: float, seed: int, lat: dict, errors: dict, acked: list) -> None:
    from frcore.bank.serve import http_client

    rng = random.Random(seed * 1000 + i)
    mine: list[str] = []
    n = 0
    async with http_client(url, token) as client:
        while time.monotonic() < until:
            tool = rng.choices(TOOLS, MIX)[0]
            if tool == "forget" and not mine:
                tool = "remember"
            args: dict[str, Any]
            if tool == "remember":
                fid = f"c{i}.f{n}"
                n += 1
                args = {
                    "facts": [
                        {
                            "id": fid,
                            "text": f"client {i} note {n}: I bought {rng.randint(1, 99)} apples at the market",
                            "categories": {"FINANCIAL_MATERIAL": 1.0},
                            "said_at": "2025-01-01",
                        }
                    ]
                }
            elif tool == "recall":
                args = {"text": f"how many apples did client {rng.randrange(20)} buy?", "k": 5}
            else:
                fid = mine.pop(rng.randrange(len(mine)))
                args = {"edge_id": fid, "reason": "load test"}
            t = time.perf_counter()
            try:
                r = await client.call_tool(tool, args)
                ok = not getattr(r, "is_error", False)
            except Exception:
                ok = False
            lat[tool].append(time.perf_counter() - t)
            if not ok:
                errors[tool] += 1
            elif tool == "remember":
                mine.append(fid)
                acked.append(fid)


def run(clients: int, seconds: float, embedder: str, seed: int = 0) -> dict:
    import anyio

    seconds = min(float(seconds), 60.0)
    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "load.db"
        port = _free_port()
        token = secrets.token_urlsafe(32)  # the server asks every request for it (docs/serve.md#authentication)
        proc = subprocess.Popen(
            [sys.executable, "-m", "frcore.cli", "serve", "--bank", str(bank), "--embedder", embedder]
            + ["--http", f"127.0.0.1:{port}"],
            env={**os.environ, TOKEN_ENV: token},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        lat: dict[str, list[float]] = {t: [] for t in TOOLS}
        errors = dict.fromkeys(TOOLS, 0)
        acked: list[str] = []
        try:
            _wait_listening(proc, port)
            url = f"http://127.0.0.1:{port}/mcp"
            unauthorized = _status_without_token(port)

            async def main() -> None:
                until = time.monotonic() + seconds
                with anyio.fail_after(seconds + 60):
                    async with anyio.create_task_group() as tg:
                        for i in range(clients):
                            tg.start_soon(_client, url, token, i, until, seed, lat, errors, acked)

            t0 = time.perf_counter()
            anyio.run(main)
            wall = time.perf_counter() - t0
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        from frcore.bank import Bank

        with Bank.open(str(bank), readonly=True) as b:
            stored = {e["id"] for e in b.export()["edges"]}
        missing = sorted(set(acked) - stored)
    per_tool = {
        t: {
            "calls": len(v),
            "errors": errors[t],
            "p50_ms": round(1e3 * float(np.percentile(v, 50)), 1) if v else None,
            "p99_ms": round(1e3 * float(np.percentile(v, 99)), 1) if v else None,
        }
        for t, v in lat.items()
    }
    calls = sum(len(v) for v in lat.values())
    return {
        "clients": clients,
        "seconds": seconds,
        "embedder": embedder,
        "calls": calls,
        "calls_per_second": round(calls / wall, 1),
        "errors": sum(errors.values()),
        "acknowledged_remembers": len(acked),
        "missing_after": missing,
        "status_without_token": unauthorized,
        "tools": per_tool,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--seconds", type=float, default=30.0, help="at most 60")
    p.add_argument("--embedder", default="hash")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    out = run(a.clients, a.seconds, a.embedder, a.seed)
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
