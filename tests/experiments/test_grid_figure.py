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
    """Widths compared with each other, not with a pixel count: matplotlib's rc (``savefig.bbox:
    tight`` when the paper figures' settings are loaded) trims a figure by its contents."""
    from PIL import Image

    def width(n_per_axis: int, name: str) -> int:
        with Image.open(plot_grid(_result(n_per_axis), tmp_path / name)) as im:
            return im.size[0]

    assert 4**3 > LABELLED_BARS and 3**3 <= LABELLED_BARS
    big, bigger = width(4, "big.png"), width(5, "bigger.png")  # 64 and 125 settings, ranked
    assert abs(big - bigger) <= 0.05 * big  # fixed width, whatever the number of settings
    small = width(3, "small.png")  # 27 settings: a labelled bar each, 0.35 in per bar
    tiny = width(2, "tiny.png")  # 8 settings: the 6 in minimum
    assert small > 1.3 * tiny  # labelled bars widen the figure; 125 ranked settings do not
    assert bigger < 0.35 * 125 * 72  # far below a labelled bar per setting, at any dpi ≥ 72
