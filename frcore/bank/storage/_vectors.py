"""``vectors.f32`` as the querying process reads it: memory-mapped, with the rows a query needs
read by ``pread`` (:class:`VectorMap`)."""

from __future__ import annotations

import os

import numpy as np


class VectorMap(np.memmap):
    """``vectors.f32`` memory-mapped, with the identity (``file_id``: device, inode) of the file
    mapped. A query multiplies only the approximate index's candidates and the rows it does not
    hold; read through the map, each row's page fault maps a whole block of the file around it
    (a 2 MiB folio of the page cache, where the kernel keeps the file in large folios), so that a
    thousand scattered rows would make most of the file resident in the querying process.
    :meth:`take_rows` reads them with ``pread`` instead: the same values, none of the file mapped."""

    file_id: tuple[int, int] | None = None

    def take_rows(self, rows: np.ndarray) -> np.ndarray:
        """``self[rows]`` as a new C-contiguous float32 array, equal to it element for element
        (``rows``: 1-d row numbers, in any order, repeats allowed), read from the file with one
        ``pread`` per run of consecutive rows; through the map when the file at its path is no
        longer the one mapped (scrubbed and rebuilt since), or cannot be opened."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        n, dim = int(self.shape[0]), int(self.shape[1])
        out = np.empty((rows.size, dim), dtype=np.float32)
        if rows.size == 0:
            return out
        if int(rows.min()) < 0 or int(rows.max()) >= n:
            raise IndexError(f"rows outside [0, {n})")
        try:
            fd = os.open(str(self.filename), os.O_RDONLY)
        except (OSError, TypeError):
            return np.array(self[rows], dtype=np.float32)
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.file_id:
                return np.array(self[rows], dtype=np.float32)
            width = dim * 4
            view = memoryview(out.data).cast("B")
            cuts = [0, *(np.flatnonzero(np.diff(rows) != 1) + 1).tolist(), rows.size]
            first = rows[cuts[:-1]].tolist()
            for lo, hi, row in zip(cuts[:-1], cuts[1:], first):
                done, want, at = 0, (hi - lo) * width, int(self.offset) + row * width
                while done < want:
                    got = os.preadv(fd, [view[lo * width + done : hi * width]], at + done)
                    if got <= 0:
                        raise OSError(f"{self.filename}: ends before row {row + (hi - lo)}")
                    done += got
        finally:
            os.close(fd)
        return out
