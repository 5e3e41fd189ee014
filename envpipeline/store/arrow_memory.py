"""pyarrow set up for a process held to its peak memory (`envpipeline compose`, issue #16)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import pyarrow as pa


class _NoPandas(importlib.abc.MetaPathFinder):
    """While on `sys.meta_path`, ``import pandas`` raises ModuleNotFoundError."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "pandas":
            raise ModuleNotFoundError("pandas is hidden while pyarrow looks for it", name="pandas")
        return None


def use_lean_arrow() -> None:
    """Give pyarrow's Python side the system allocator and convert Python lists without pandas.

    Arrow's default pool (mimalloc) keeps what each chunk's conversion freed, tens of MB over a run;
    the system allocator hands it back. (Arrow's C++ side picks its allocator when pyarrow loads:
    the command line loads it through `envpipeline.arrow_allocator` for that.)

    The first time pyarrow converts a Python list it imports pandas (about 40 MB resident) only to
    ask whether the list is a pandas object, and remembers the answer. With pandas hidden for that
    first conversion the answer is "no pandas", for that question alone: pyarrow's pandas APIs
    (`to_pandas`, `from_pandas`) import pandas when called, as before. A pandas object given to
    `pa.array` before any of them would be converted as a plain sequence (NaN stays NaN), so this is
    for a process that converts no pandas objects. Nothing changes when pandas is already loaded.
    """
    pa.set_memory_pool(pa.system_memory_pool())
    if "pandas" in sys.modules:
        return
    hidden = _NoPandas()
    sys.meta_path.insert(0, hidden)
    try:
        pa.array([None])
    finally:
        sys.meta_path.remove(hidden)
