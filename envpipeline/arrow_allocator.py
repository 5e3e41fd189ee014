"""Importing this module loads pyarrow with the system allocator, for this process only.

Arrow's C++ allocator is picked once, when pyarrow loads (mimalloc unless
``ARROW_DEFAULT_MEMORY_POOL`` says otherwise), and the Parquet writer allocates from it whatever
pool pyarrow's Python side is set to: the first chunk `compose` spooled left ~20 MB of huge pages
resident for the rest of the run. A command is held to its peak memory (issue #16), and the system
allocator hands back what it frees. The command line imports this first. The variable is removed
again once pyarrow has read it, so the processes a command starts (the Dagster daemon and the runs
of `envpipeline run`) keep their own choice; a value the user set, or a pyarrow already loaded, is
left alone.
"""

from __future__ import annotations

import os
import sys

import envpipeline.blas_threads  # noqa: F401  (pyarrow loads numpy: its BLAS thread count first)


def _load_with_the_system_allocator() -> None:
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ or "pyarrow" in sys.modules:
        return
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
    try:
        import pyarrow  # noqa: F401  (reads the variable when it loads)
    finally:
        del os.environ["ARROW_DEFAULT_MEMORY_POOL"]


_load_with_the_system_allocator()
