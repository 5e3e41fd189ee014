#!/usr/bin/env python3
"""Reference solution of an exported CompoWorld task, replayed through /app/envtool.py.

``steps.json`` beside this script holds the gold calls; an argument with a binding is read from
the ``data`` of an earlier step's observation (path of keys, indexes and selectors, then the template), as
the task's verification did. The gold final answer goes to /app/answer.txt.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
APP = os.environ.get("ENVTOOL_APP", "/app")
sys.path.insert(0, APP)


def read_path(data: Any, path: list[Any]) -> Any:
    """Follow keys, list indexes and selectors (field -> value: the list's first item whose fields
    hold those values) inside observation data; KeyError when absent."""
    for key in path:
        if isinstance(key, dict):
            items = data if isinstance(data, list) else []
            matches = [
                i for i in items if isinstance(i, dict) and all(f in i and i[f] == v for f, v in key.items())
            ]
            if not matches:
                raise KeyError(str(key))
            data = matches[0]
            continue
        if isinstance(key, int):
            if not isinstance(data, list) or key >= len(data):
                raise KeyError(key)
        elif not isinstance(data, dict) or key not in data:
            raise KeyError(key)
        data = data[key]
    return data


def placed(shape: Any, value: Any) -> Any:
    """A JSON template's structure with the value where the string "{value}" stands."""
    if shape == "{value}":
        return value
    if isinstance(shape, list):
        return [placed(item, value) for item in shape]
    if isinstance(shape, dict):
        return {key: placed(item, value) for key, item in shape.items()}
    return shape


def main() -> int:
    import envtool

    with open(os.path.join(HERE, "steps.json"), encoding="utf-8") as handle:
        plan = json.load(handle)
    observations: list[dict[str, Any]] = []
    for step in plan["steps"]:
        arguments = dict(step["arguments"])
        for name, binding in step.get("bindings", {}).items():
            try:
                value = read_path(observations[binding["step"]].get("data"), binding["path"])
            except (KeyError, IndexError):
                value = None
            template = binding.get("template", "{value}")
            if template == "{value}":
                arguments[name] = value
            elif template.startswith("json:"):  # JSON around the value (models.task.fill_template)
                arguments[name] = placed(json.loads(template[len("json:") :]), value)
            else:
                arguments[name] = template.format(value=value)
        observation = envtool.run_command("call", step["tool"], arguments)
        print(step["tool"], json.dumps(observation)[:300])
        observations.append(observation)
    envtool.answer(plan["answer"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
