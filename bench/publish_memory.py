"""Peak memory of a streamed compose partition as it grows: spooled in chunks, then published.

`envpipeline compose` spools its records a chunk at a time (`store/spool.py`) and publishes the
partition at the end by reading the spool back a batch at a time. This bench measures that path
alone at sizes a CLI run would take hours to reach on this machine: it composes --sample real
candidates once, then, for each --rows size, in a fresh process, spools that many task rows
(the sample repeated, each copy with its own task id, so every row hash differs) in chunks of 100
and publishes them with `publish_partition`, the function the CLI calls. Printed per size: the
resident set before publishing, the process's peak, and the growth the publish added.

The baseline, measured in the same run, reads the spool back with pyarrow's defaults
(`pre_buffer=True`, decoding threads), which is how `RowSpool.batches` read it before: the
read-ahead cache keeps what it read until the file is closed, so the peak grows with the partition.

Measured 2026-12-04 (2 cores; sample of 300 candidates; statistics kept for short columns only):
     1,000 rows (  8 MiB file): before peak 275 MiB (+107 at publish), now 202 MiB (+34)
    10,000 rows ( 81 MiB file): before peak 349 MiB (+177),           now 226 MiB (+53)
    50,000 rows (415 MiB file): before peak 692 MiB (+503),           now 270 MiB (+76)
The CLI itself starts higher than this bench's process (the whole command's imports and the
composition caches): see bench/compose_cli.py for its end-to-end peak.

Usage: python bench/publish_memory.py [--rows 1000 10000 50000] [--sample 300]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHUNK = 100


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def sample_rows(n: int, path: Path) -> None:
    """`n` judged candidates of the default generator, as lake rows, into a JSON-lines file."""
    from envpipeline.compose.author import ComposeConfig
    from envpipeline.compose.pipeline import compose_task
    from envpipeline.store.records import task_to_row

    with path.open("w") as f:
        for seed in range(n):
            f.write(json.dumps(task_to_row(compose_task(seed, ComposeConfig(), "bench"))) + "\n")


def spool_and_publish(rows_file: Path, n: int, read_ahead: bool, folder: Path) -> dict[str, float]:
    """In this process: spool `n` rows built from the sample, publish them; memory figures."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from envpipeline.store import spool as spool_module
    from envpipeline.store.lake import Lake, Lineage

    pa.set_memory_pool(pa.system_memory_pool())  # as the compose command does
    sample = [json.loads(line) for line in rows_file.read_text().splitlines()]
    if read_ahead:

        def batches(self: spool_module.RowSpool):  # the read before this bench's fix
            self.close()
            if self.schema is None:
                return
            yield from pq.ParquetFile(self.path).iter_batches(batch_size=spool_module.READ_BATCH)

        spool_module.RowSpool.batches = batches  # type: ignore[method-assign]
    lake = Lake(folder)
    spool = spool_module.RowSpool(lake.partition_path("composed_task_specs", "p").parent, "accepted")
    for start in range(0, n, CHUNK):
        chunk = []
        for i in range(start, min(n, start + CHUNK)):
            row = sample[i % len(sample)]
            chunk.append({**row, "task_id": f"{row['task_id']}-{i}"})
        spool.append(chunk)
    before = rss_mib()
    target = spool_module.publish_partition(
        lake, "composed_task_specs", "p", [spool], Lineage("bench", "v", {})
    )
    spool.discard()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "rows": pq.ParquetFile(target).metadata.num_rows,
        "before_publish": before,
        "peak": peak,
        "file_mib": target.stat().st_size / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--sample", type=int, default=300, help="real candidates composed once")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # rows_file n read_ahead
    args = parser.parse_args()
    if args.child:
        rows_file, n, read_ahead = Path(args.child[0]), int(args.child[1]), args.child[2] == "1"
        with tempfile.TemporaryDirectory(prefix="publish-memory-") as folder:
            print(json.dumps(spool_and_publish(rows_file, n, read_ahead, Path(folder))))
        return
    with tempfile.TemporaryDirectory(prefix="publish-memory-") as scratch:
        rows_file = Path(scratch) / "rows.jsonl"
        sample_rows(args.sample, rows_file)
        print(
            f"sample: {args.sample} composed candidates; chunks of {CHUNK} rows; each size in a fresh process"
        )
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        for n in args.rows:
            figures = {}
            for label, read_ahead in (("read-ahead (before)", "1"), ("batch at a time (now)", "0")):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(rows_file), str(n), read_ahead],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=True,
                )
                r = json.loads(out.stdout.strip().splitlines()[-1])
                figures[label] = r
                print(
                    f"{n:>7,} rows ({r['file_mib']:6.0f} MiB file)  {label:<22} RSS before publish "
                    f"{r['before_publish']:5.0f} MiB  peak {r['peak']:6.0f} MiB  "
                    f"publish added {r['peak'] - r['before_publish']:6.0f} MiB"
                )
            before, now = figures["read-ahead (before)"], figures["batch at a time (now)"]
            print(f"{'':>7}   peak ratio before/now: {before['peak'] / now['peak']:.2f}x")


if __name__ == "__main__":
    main()
