"""A small disk cache of LLM responses: one inspectable JSON file per request hash, written atomically."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from envpipeline.errors import LLMError


def request_key(payload: dict[str, Any]) -> str:
    """The sha256 of a canonical JSON rendering of the request (model, endpoint, messages, params)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseCache:
    """`<root>/<key[:2]>/<key>.json` holding the request summary and the response fields."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path_for(self, key: str) -> Path:
        """Where the entry for `key` lives."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None when absent or unreadable (a corrupt file is a miss)."""
        try:
            entry = json.loads(self.path_for(key).read_text())
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    def put(self, key: str, entry: dict[str, Any]) -> Path:
        """Store `entry` under `key`: write a temp file beside the target, then rename over it."""
        target = self.path_for(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}.", suffix=".tmp", dir=target.parent)
            try:
                with os.fdopen(fd, "w") as handle:
                    json.dump({**entry, "key": key}, handle, indent=2, sort_keys=True, ensure_ascii=False)
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as e:
            raise LLMError(f"cannot write the LLM cache entry {target}: {e}") from e
        return target
