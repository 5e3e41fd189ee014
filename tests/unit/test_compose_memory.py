"""`envpipeline compose` is held to a memory budget: it loads nothing it does not use.

Each check runs in a fresh interpreter, since what a process has imported (and how pyarrow was set
up) is decided once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_python(code: str) -> dict[str, object]:
    """Run `code` in a fresh interpreter; it prints one JSON object, returned here."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("ARROW_DEFAULT_MEMORY_POOL", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_compose_red_team_loads_no_world_agent_clients():
    # the world policies' agents speak HTTP and MCP: those clients cost tens of MB, and a compose
    # red team never runs a world agent
    found = run_python(
        "import json, sys\n"
        "from envpipeline.redteam.registry import policies_for\n"
        "assert policies_for('compose')\n"
        "print(json.dumps({'loaded': sorted({'httpx', 'mcp', 'uvicorn'} & set(sys.modules))}))\n"
    )
    assert found["loaded"] == []


def test_the_command_line_gives_arrow_the_system_allocator():
    # set before pyarrow loads, or the Parquet writer keeps allocating from mimalloc
    found = run_python(
        "import json\n"
        "import os\n"
        "import envpipeline.cli\n"
        "import pyarrow\n"
        "print(json.dumps({'backend': pyarrow.default_memory_pool().backend_name,"
        " 'inherited': os.environ.get('ARROW_DEFAULT_MEMORY_POOL')}))\n"
    )
    assert found["backend"] == "system"
    # the processes a command starts (the Dagster daemon, its runs) keep their own allocator
    assert found["inherited"] is None


def test_lean_arrow_converts_rows_without_loading_pandas():
    found = run_python(
        "import json, sys\n"
        "import pyarrow as pa\n"
        "from envpipeline.store.arrow_memory import use_lean_arrow\n"
        "use_lean_arrow()\n"
        "table = pa.Table.from_pylist([{'id': 't1', 'n': 2, 'gates': None}])\n"
        "loaded = 'pandas' in sys.modules\n"
        "frame = table.to_pandas()  # pyarrow's own pandas API still imports it\n"
        "print(json.dumps({'loaded': loaded, 'frame': frame.to_dict('records'),"
        " 'pool': pa.default_memory_pool().backend_name}))\n"
    )
    assert found == {"loaded": False, "frame": [{"id": "t1", "n": 2, "gates": None}], "pool": "system"}


def test_imported_services_build_their_state_validators_on_first_use():
    # the library synthesizes every corpus service when it loads; a run uses few of them
    found = run_python(
        "import json, random\n"
        "from envpipeline.services.library.imported import CORPUS_SERVICES\n"
        "from envpipeline.services.registry import all_services\n"
        "library = all_services()\n"
        "services = list(CORPUS_SERVICES.values())\n"
        "built = sum(cls.state_model.__pydantic_complete__ for cls in services)\n"
        "state = services[0].generate_state(random.Random(0))\n"
        "again = services[0].state_model.model_validate(state.model_dump())\n"
        "print(json.dumps({'services': len(services), 'built_at_load': built,"
        " 'used': services[0].state_model.__pydantic_complete__, 'round_trip': again == state}))\n"
    )
    assert found["services"] and found["built_at_load"] == 0
    assert found["used"] and found["round_trip"]


def test_large_blocks_go_back_to_the_system_when_freed():
    # glibc's mallinfo2: hblkhd is the bytes held in blocks mapped on their own. By default a freed
    # 1 MiB block raises the threshold, and the next one comes from the heap (which keeps it)
    code = (
        "import ctypes, json, sys\n"
        "from envpipeline.process_memory import release_large_blocks_on_free\n"
        "class Info(ctypes.Structure):\n"
        "    _fields_ = [(n, ctypes.c_size_t) for n in ('arena', 'ordblks', 'smblks', 'hblks', 'hblkhd',"
        " 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost')]\n"
        "libc = ctypes.CDLL('libc.so.6')\n"
        "libc.mallinfo2.restype = Info\n"
        "was_set = release_large_blocks_on_free() if sys.argv[1] == 'set' else None\n"
        "first = bytearray(1 << 20)\n"
        "del first\n"
        "second = bytearray(1 << 20)\n"
        "print(json.dumps({'set': was_set, 'mapped': libc.mallinfo2().hblkhd >= 1 << 20}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = {}
    for mode in ("set", "default"):
        done = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, env=env)
        if done.returncode != 0 and "mallinfo2" in done.stderr:
            pytest.skip("not glibc >= 2.33")
        assert done.returncode == 0, done.stderr
        runs[mode] = json.loads(done.stdout)
    assert runs["set"] == {"set": True, "mapped": True}
    assert runs["default"]["mapped"] is False, (
        "the default threshold moved up: the second block is on the heap"
    )
