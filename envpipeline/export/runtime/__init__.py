"""Scripts copied verbatim into exported Harbor tasks (stdlib plus the vendored runtime only).

    envtool.py     environment/app/envtool.py: the composed task's tools on the command line
    envserver.py   environment/tools/envserver.py (portable mode): the services behind envtool, as root
    evaluate.py    tests/evaluate.py: replays the agent's call log and scores the criteria
    solve.py       solution/solve.py: replays the reference solution through envtool
    worldtool.py   environment/app/worldtool.py: a world task's web/MCP actions as commands
    world_solve.py solution/solve.py of a world task: its reference steps via worldtool and bash

They never import envpipeline at module import time on the host, so the package imports them
only as files (`RUNTIME_DIR`).
"""

from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent
