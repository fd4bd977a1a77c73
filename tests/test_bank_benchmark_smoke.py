"""`fr bank bench` machinery on a tiny bank: shape of the result only (no timing assertions)."""

from frcore.bank._benchmark import measure_size


def test_measure_size_shape():
    row = measure_size(200, repeats=3, dim=64)
    assert row["n"] == 200
    for key in ("ingest_facts_per_s", "first_query_s", "query_median_ms", "query_p90_ms", "peak_rss_mb"):
        assert row[key] > 0, key
    assert row["target_ms"] is None and row["meets_target"] is None
