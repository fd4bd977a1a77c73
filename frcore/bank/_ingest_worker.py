"""The worker process of :func:`frcore.bank._ingest.add_batches`: ``python -m frcore.bank._ingest_worker``
reads :func:`~frcore.bank._ingest.prepare` jobs from standard input and writes their results to
what was its standard output (its own output goes to standard error, so that nothing an import
prints can corrupt the stream)."""

from __future__ import annotations

import os
import sys


def main() -> None:
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from frcore.bank._ingest import serve

    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
