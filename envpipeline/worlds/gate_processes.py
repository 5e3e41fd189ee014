"""Worker processes for gating world tasks: one core each, where threads share one.

A world task's gates are Python from end to end (scripted agents, the web and MCP servers they
call, the verifier, the red team), so threads in one process take turns on the GIL and gating
uses one core however many tasks run at once. `gate_pool` gives a process pool instead: each
worker keeps its own pooled servers and sandbox sessions (`rollout_services.ServicePool`) for
its lifetime and closes them when the pool shuts down. Workers start through ``forkserver``: the
gating process runs server threads, which a plain ``fork`` would copy mid-flight.

Only what crosses a process boundary can go: the offline (scripted) default. A judge LLM or a
custom rollout policy keeps the thread pool (`processes_for`).

The fork server imports what the workers need once (`gate_worker_preload`), so that workers
start warm instead of each importing the project; `warm_workers` starts it ahead of the gating,
and a run that builds its worlds first (`pipeline.build_and_gate`) starts it before it builds
them, so that those imports overlap the build.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import multiprocessing.util
import os
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from envpipeline.models.task import GateResult
from envpipeline.models.world_task import Rollout, WorldTask
from envpipeline.worlds.gates import GateConfig, gates_after_diversity
from envpipeline.worlds.rollout_services import ServicePool, sharing

#: Fewest candidates worth starting worker processes for (each pays its imports, about a second).
MIN_TASKS_FOR_PROCESSES = 4

#: Imported by the workers' fork server before it forks them.
PRELOAD_MODULE = "envpipeline.worlds.gate_worker_preload"

_worker_stack: ExitStack | None = None
_warm_lock = threading.Lock()


def processes_for(config: GateConfig, tasks: int, portable: bool) -> int:
    """Worker processes to gate `tasks` candidates with: `config.task_processes` (None: one per
    core, at most `config.task_workers`); 0 when threads must do (a non-portable judge or policy,
    too few tasks, or a single process asked for)."""
    wanted = config.task_processes
    if wanted is None:
        wanted = min(
            config.task_workers, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        )
    if not portable or wanted <= 1 or tasks < MIN_TASKS_FOR_PROCESSES:
        return 0
    return wanted


def warm_workers() -> None:
    """Start this process's fork server now, importing what gating workers need (`PRELOAD_MODULE`)
    while the caller goes on; a no-op when it runs already.

    One fork server serves the whole process (``multiprocessing`` keeps one): when another part of
    the process started it first, with its own imports, it is used as it is and the workers import
    the rest themselves."""
    with _warm_lock:
        multiprocessing.set_forkserver_preload([PRELOAD_MODULE])
        multiprocessing.forkserver.ensure_running()


def gate_pool(config: GateConfig, processes: int) -> Executor:
    """A process pool of `processes` gating workers (threads when 0), `config.task_workers` wide."""
    if processes <= 0:
        return ThreadPoolExecutor(max_workers=config.task_workers)
    warm_workers()
    return ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("forkserver"),
        initializer=_start_worker,
        initargs=(config.reuse_services, dict(os.environ)),
    )


def _start_worker(reuse_services: bool, environ: dict[str, str]) -> None:
    """Give this worker the caller's environment and its own pooled services, closed when the
    worker exits. (The fork server is started once per process, with the environment of that
    moment: a sandbox setting changed since must still reach the workers.)"""
    global _worker_stack
    os.environ.clear()
    os.environ.update(environ)
    _worker_stack = ExitStack()
    if reuse_services:
        _worker_stack.enter_context(sharing(_worker_stack.enter_context(ServicePool())))
    # a pool worker leaves through os._exit: atexit hooks never run, multiprocessing's finalizers do
    multiprocessing.util.Finalize(None, _worker_stack.close, exitpriority=100)


def gates_in_worker(
    task: WorldTask, day_dir: Path, work: Path, config: GateConfig
) -> tuple[list[GateResult], list[Rollout]]:
    """`gates_after_diversity` of the offline default, in a worker process."""
    return gates_after_diversity(task, day_dir, work, None, config, None, None)
