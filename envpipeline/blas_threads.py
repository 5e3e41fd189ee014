"""Importing this module gives numpy's BLAS one thread, in this process and in those it starts.

OpenBLAS (bundled by the numpy and scipy wheels) runs a matrix product on a pool of threads, one
per core, which then spin for a while waiting for the next product. The pipeline's numeric work is
small (TF-IDF similarities of tens to hundreds of texts, the Vendi score's eigenvalues) and its
parallelism is processes: gating workers, Dagster runs side by side. There the spinning threads
take cores from the workers. Measured gating 70 world tasks on 2 cores: the gating process spent
2.6-2.8 s of CPU, mostly OpenBLAS threads spinning after the diversity gate's products, against
0.5-0.7 s with one thread (`bench/world_gating.py`).

OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when it loads, so the command line and the Dagster
shell import this module before anything imports numpy. The variable stays set, so the processes
they start (gating workers, the Dagster daemon, code server and runs) load theirs the same way. A
value the user set is kept (``OPENBLAS_NUM_THREADS=2`` gives the threads back); a numpy loaded
before this module keeps its threads.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
