"""`fr bank bench` machinery on a tiny bank: shape of the result only (no timing assertions)."""

import pytest

from experiments.bank_bench import measure_size


@pytest.mark.slow  # over 8 s here: `make test-fast` leaves it out
def test_measure_size_shape():
    row = measure_size(200, repeats=3, dim=64)
    assert row["n"] == 200
    for key in ("ingest_facts_per_s", "first_query_s", "query_median_ms", "query_p90_ms", "peak_rss_mb", "import_s"):
        assert row[key] > 0, key
    assert row["target_ms"] is None and row["meets_target"] is None
    assert row["cpu_dispatch"] in ("sync", "async")
    assert row["indexed_rows"] == 200  # the fresh process read the bank from its index


@pytest.mark.slow  # over 8 s here: `make test-fast` leaves it out
def test_cli_wall_time_is_measured():
    from experiments.bank_bench import cli_query_wall_s

    got = cli_query_wall_s(50, runs=1)
    assert got["n"] == 50 and len(got["cli_query_wall_runs_s"]) == 1 and got["cli_query_wall_s"] > 0
    # answered by fr bank serve-local: the same output as the cold path
    assert len(got["cli_query_warm_wall_runs_s"]) == 1 and got["cli_query_warm_wall_s"] > 0
    assert got["cli_query_warm_equal"] is True


def test_embedding_section_reports_query_latency_and_batched_throughput(monkeypatch):
    """The embedding part of the report, with the hashing embedder standing in for MiniLM."""
    import frcore.bank
    from experiments import bank_bench
    from frcore.bank.search import _embed

    asked = []
    monkeypatch.setattr(frcore.bank, "get_embedder", lambda name: asked.append(name) or _embed.HashingEmbedder(dim=64))
    e = bank_bench.query_embedding_ms(repeats=3)
    assert asked == ["minilm"]  # the stand-in was used
    assert e["minilm_query_embedding_median_ms"] > 0
    assert e["throughput"]["n"] == 512 and e["throughput"]["sentences_per_s"] > 0
    assert e["throughput_target_sentences_per_s"] == 200


def test_ann_recall_is_measured(tmp_path):
    """The approximate index's recall and result agreement on a small bank (asked for more
    candidates than the bank has rows: nothing is missed)."""
    from experiments.bank_bench import ann_recall, recall_queries
    from frcore.bank._bank import Bank
    from frcore.bank.search._ann import AnnConfig
    from frcore.bank.storage._synthetic import synthetic_facts

    path = str(tmp_path / "b.db")
    with Bank.open(path, embedder="hash-64", ann=AnnConfig(min_rows=0)) as bank:
        bank.add(synthetic_facts(600))
    got = ann_recall(path, count=12)
    assert got["ann_queries"] == 12 and len(recall_queries(600, 12)) == 12
    assert got["ann_recall_at_10"] == 1.0 and got["ann_recall_min"] == 1.0
    assert 0.0 <= got["ann_results_equal"] <= 1.0
