"""``python -m frcore_warm ARGS``: the ``fr`` console script (:func:`frcore_warm.run`)."""

import sys

from frcore_warm import run

sys.exit(run())
