"""What a sandbox's verdicts depend on beyond the bundle: the base image or the host toolchain."""

from __future__ import annotations

import hashlib
import shutil
import subprocess

from envpipeline.sandbox.base import BASE_IMAGE, Sandbox


def _run(*command: str) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (result.stdout + result.stderr).strip() if result.returncode == 0 else ""


def environment_fingerprint(sandbox: Sandbox) -> str:
    """Docker: the base image id. Local: the host python and bubblewrap versions."""
    if sandbox.backend == "docker":
        image = _run("docker", "image", "inspect", "--format", "{{.Id}}", BASE_IMAGE)
        return f"docker:{image or 'missing'}"
    parts = [_run("/usr/bin/python3", "--version")]
    if shutil.which("bwrap"):
        parts.append(_run("bwrap", "--version"))
    return "local:" + hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
