"""``python -m paper_figures --results DIR --out DIR``: rebuild every figure and table."""

import sys

from .build import main

sys.exit(main())
