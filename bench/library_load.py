"""How long loading the whole service library takes (every shipped spec synthesized).

    PYTHONPATH=. .venv/bin/python bench/library_load.py

Runs a fresh interpreter, times ``all_services()`` (imports + synthesis of every spec in
``envpipeline/services/specs``), and prints services, tools, simulated tools and seconds.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import time
start = time.perf_counter()
from envpipeline.services.registry import all_services
services = all_services()
seconds = time.perf_counter() - start
tools = sum(len(c.tools) for c in services.values())
simulated = sum(t.simulated for c in services.values() for t in c.tools.values())
print(f"{len(services)} services, {tools} tools, {simulated} simulated ({simulated / tools:.1%}), loaded in {seconds:.2f}s")
"""

if __name__ == "__main__":
    sys.exit(subprocess.call([sys.executable, "-c", CHILD]))
