"""``fr sweep grid``'s figure for a large grid of three or more parameters: the settings ranked by
pass on a figure of fixed width, not a labelled bar per setting (a 10⁴-setting grid would be a
figure of 3,500 inches)."""

from __future__ import annotations

import itertools

from experiments.grid import LABELLED_BARS, plot_grid


def _result(n_per_axis: int) -> dict:
    values = [round(0.1 * i, 1) for i in range(n_per_axis)]
    axes = [{"name": n, "values": values} for n in ("a", "b", "c")]
    grid = [
        {"params": dict(zip("abc", combo)), "pass": sum(combo) / 3, "staleness": 0.0}
        for combo in itertools.product(values, repeat=3)
    ]
    ref = {"pass": 0.5, "staleness": 0.0}
    return {"axes": axes, "grid": grid, "reference": ref, "system": "fr-full", "suite": "s", "n_questions": 1}


def test_a_large_grid_is_ranked_on_a_fixed_width(tmp_path):
    from PIL import Image

    big = _result(4)  # 64 settings
    assert len(big["grid"]) > LABELLED_BARS
    with Image.open(plot_grid(big, tmp_path / "big.png")) as im:
        assert im.size[0] == 8 * 120  # 8 in at 120 dpi
    small = _result(3)  # 27 settings: a labelled bar each, 0.35 in per bar
    with Image.open(plot_grid(small, tmp_path / "small.png")) as im:
        assert im.size[0] == round(max(6, 0.35 * 27) * 120)
