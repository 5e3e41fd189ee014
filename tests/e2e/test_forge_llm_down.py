"""`forge --synthesizer llm` against an LLM server that is down: one line on stderr, exit 2.

With the default retries litellm retries through tenacity (the `[llm]` extra); without it the run
used to crash with litellm's "tenacity import failed" traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.llm_server import ScriptedLLMServer

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def test_forge_with_llm_synthesizer_and_server_down_is_one_line_exit_2(tmp_path, local_sandbox):
    server = ScriptedLLMServer().start()
    api_base = server.api_base
    server.stop()  # a port nothing listens on
    done = subprocess.run(
        [sys.executable, "-m", "envpipeline.cli", "forge", "--target", "1", "--seeds-per-family", "1"]
        + ["--rollouts", "1", "--synthesizer", "llm", "--model", "openai/forge-down", "--api-base", api_base]
        + ["--out", str(tmp_path / "forge"), "--sandbox", "local"],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "ENVPIPELINE_HOME": str(tmp_path / "home"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        },
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: openai/forge-down at ")
    assert "failed after 2 retries" in lines[0] and "tenacity" not in done.stderr
