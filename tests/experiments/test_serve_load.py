"""The load experiment's promise on a short run: concurrent MCP clients over streamable HTTP get
no errors, and every acknowledged remember is in the bank afterwards (no timing is asserted), with
authentication on: every client sends the server's bearer token, and a request without it is 401."""

from experiments.serve_load import run


def test_concurrent_clients_lose_nothing():
    out = run(clients=3, seconds=3, embedder="hash")
    assert out["status_without_token"] == 401, out
    assert out["errors"] == 0, out
    assert out["acknowledged_remembers"] > 0 and out["missing_after"] == []
    assert {t: v["calls"] > 0 for t, v in out["tools"].items()} == {"remember": True, "recall": True, "forget": True}
