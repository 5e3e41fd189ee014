"""Let a finished process exit without the interpreter's last garbage collections.

When a Python process ends, the interpreter collects garbage while it tears its modules down,
and each collection walks every tracked object. A command that imported Dagster, pydantic models
of the whole service library, pandas and the lake spends about 0.8 s of CPU on it after its
work is done (`bench/process_exit.py`: a process holding the asset definitions and the service
library took 756 ms from its last line to its exit, 24 ms with `freeze_for_exit`).

`freeze_for_exit` moves every object alive at that moment out of the collector's reach
(``gc.freeze()``). Everything else about the exit is unchanged: ``atexit`` handlers and
``weakref.finalize`` callbacks run, modules are torn down, and objects not in a reference cycle
are freed as their references go. Only objects in reference cycles are left to the operating
system, as they would be at a hard exit. Call it once the process's work is done and its files
are written and closed, at the process's entry point (a console script, a ``__main__`` guard),
never in a function another program may call and go on working (a process that froze its heap
would never collect those cycles again).
"""

from __future__ import annotations

import gc
import runpy
import sys


def freeze_for_exit() -> None:
    """Spare the interpreter its final collections (see the module docstring): the process is done."""
    gc.freeze()


def run_module(argv: list[str]) -> None:
    """``python -m MODULE ARGS...`` (``argv`` = [MODULE, *ARGS]), then `freeze_for_exit` however it ends.

    For a process this project starts but does not write, such as ``dagster api grpc``."""
    module, *args = argv
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        freeze_for_exit()


if __name__ == "__main__":
    run_module(sys.argv[1:])
