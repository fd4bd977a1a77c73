"""Shared reader for the noise and label sweeps: ``summary[kind][rate][metric] = [mean, sd]``."""

from __future__ import annotations

from ._common import field, number


def series(d: dict, file: str, kind: str, metric: str) -> tuple[list[float], list[float], list[float]]:
    """(rates, means, sds) of ``metric`` for ``kind``, rates ascending."""
    summ = field(d, f"summary.{kind}", file)
    if not isinstance(summ, dict) or not summ:
        raise ValueError(f"{file}: field summary.{kind} must be a non-empty object")
    rates, means, sds = [], [], []
    for rate in sorted(summ, key=lambda r: number(_float(r, file, kind), f"summary.{kind}", file)):
        v = field(summ[rate], metric, file) if isinstance(summ[rate], dict) else None
        if not (isinstance(v, list) and len(v) == 2):
            raise ValueError(f"{file}: summary.{kind}.{rate}.{metric} must be [mean, sd], got {v!r}")
        rates.append(float(rate))
        means.append(number(v[0], f"summary.{kind}.{rate}.{metric}.0", file))
        sds.append(number(v[1], f"summary.{kind}.{rate}.{metric}.1", file))
    return rates, means, sds


def _float(r: str, file: str, kind: str) -> float:
    try:
        return float(r)
    except ValueError:
        raise ValueError(f"{file}: summary.{kind}: rate key {r!r} is not a number") from None
