"""Persistence: the SQLite store (transactions, append, erase and purge, quarantine) and the bank's index folder.

What the rest of FR-Bank uses of this layer is imported from here; its modules are its own.
"""

from ._batch import Batch as Batch, checked as checked, parse_batch as parse_batch
from ._common import (
    StoreError as StoreError,
    iso_text as iso_text,
    storage_error as storage_error,
)
from ._index import (
    IndexSpec as IndexSpec,
)
from ._loading import ReadView as ReadView
from ._store import Store as Store
from ._synthetic import synthetic_facts as synthetic_facts

__all__ = [
    "Batch",
    "parse_batch",
    "checked",
    "IndexSpec",
    "ReadView",
    "Store",
    "StoreError",
    "iso_text",
    "storage_error",
    "synthetic_facts",
]
