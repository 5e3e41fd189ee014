"""The parts of a portable composed Harbor task (`HarborMode` ``portable``) that differ from offline.

The agent's image is ``FROM python:3.11-slim`` with exact pins of pydantic and its dependencies
(`runtime_pins`), the task's services run as root from ``/srv/envtool`` (a root-only folder
holding ``envserver.py``, the joint state, envpipeline's pure-Python runtime and the call log),
started by the image's entrypoint, and the agent runs as the unprivileged user ``agent``: its
``/app/envtool.py`` is a client of the server on 127.0.0.1:8765, so the agent learns only what
the tools serve. Harbor collects the call log and ``/app/answer.txt`` as artifacts for the separate
verifier, whose test.sh points evaluate.py at the log.
"""

from __future__ import annotations

from envpipeline.export.harbor_common import PORTABLE_BASE_IMAGE, pip_install_line

#: Portable exports: the task's services run as root in the agent's container (started by the
#: image's entrypoint, listening on localhost) with the state and the call log in a root-only
#: folder; the agent runs as an unprivileged user and reaches them only through envtool.
TOOLS_DIR = "/srv/envtool"
TOOLS_PORT = 8765
TOOLS_URL = f"http://127.0.0.1:{TOOLS_PORT}"
PORTABLE_CALLS = f"{TOOLS_DIR}/calls.jsonl"
#: The unprivileged user the agent (and the oracle) run as in portable exports.
AGENT_USER = "agent"

ENTRYPOINT_SH = f"""#!/bin/sh
# Start the task's services (root only: the state and the call log stay out of the agent's reach),
# then run the container's command.
python3 -I {TOOLS_DIR}/envserver.py > /var/log/envserver.log 2>&1 &
exec "$@"
"""

PORTABLE_TEST_SH = f"""#!/bin/bash
# Verifier (separate container): replay the services' call log, evaluate the criteria.
mkdir -p /logs/verifier
if ! ENVTOOL_CALLS={PORTABLE_CALLS} python3 -I /tests/evaluate.py > /logs/verifier/test-stdout.txt 2>&1; then
  [ -f /logs/verifier/reward.json ] || echo '{{"reward": 0}}' > /logs/verifier/reward.json
fi
"""


def portable_dockerfile(pins: list[str]) -> str:
    """The portable agent image: public base, pinned runtime, root-only services, unprivileged agent."""
    return (
        f"FROM {PORTABLE_BASE_IMAGE}\n{pip_install_line(pins)}"
        f"RUN useradd --create-home --uid 1000 {AGENT_USER}\n"
        f"COPY tools/ {TOOLS_DIR}/\nCOPY app/ /app/\n"
        f"RUN chown -R root:root {TOOLS_DIR} && chmod -R go-rwx {TOOLS_DIR} && chown -R {AGENT_USER}:{AGENT_USER} /app\n"
        f"ENV ENVTOOL_SERVER={TOOLS_URL}\nWORKDIR /app\n"
        f'ENTRYPOINT ["{TOOLS_DIR}/entrypoint.sh"]\nCMD ["sleep", "infinity"]\n'
    )
