"""The service library as data: one row per service, and a fingerprint of the whole library."""

from __future__ import annotations

import json
from typing import Any

from envpipeline.canonical import canonical_hash
from envpipeline.services.base import Service
from envpipeline.services.links import Action, Hop, Source
from envpipeline.services.registry import all_services

#: Tool schemas per service class: a class's tools never change once defined, and building the
#: JSON schemas of a whole library takes seconds (the compose command needs them for its lineage).
_SCHEMAS: dict[type[Service[Any]], list[dict[str, Any]]] = {}


def tool_schemas(cls: type[Service[Any]]) -> list[dict[str, Any]]:
    """`cls.tool_schemas()`, built once per class (callers only read them)."""
    schemas = _SCHEMAS.get(cls)
    if schemas is None:
        schemas = _SCHEMAS[cls] = cls.tool_schemas()
    return schemas


def library_fingerprint() -> str:
    """Content hash of every tool schema and link of the library."""
    payload = {
        name: {"tools": tool_schemas(cls), "links": [link.name for link in cls.links()]}
        for name, cls in all_services().items()
    }
    return canonical_hash(payload)[:16]


def library_rows() -> list[dict[str, Any]]:
    """One row per service: tools, schemas, simulated tools, links."""
    fingerprint = library_fingerprint()
    rows = []
    for name, cls in all_services().items():
        links = cls.links()
        rows.append(
            {
                "service": name,
                "title": cls.title,
                "domain": cls.domain,
                "n_tools": len(cls.tools),
                "n_write_tools": sum(t.writes for t in cls.tools.values()),
                "simulated_tools": json.dumps(sorted(n for n, t in cls.tools.items() if t.simulated)),
                "n_simulated": sum(t.simulated for t in cls.tools.values()),
                "hops": json.dumps(
                    [f"{h.name}:{h.consumes}->{h.produces}" for h in links if isinstance(h, Hop)]
                ),
                "actions": json.dumps([f"{a.name}:{a.consumes}" for a in links if isinstance(a, Action)]),
                "sources": json.dumps([f"{s.name}:->{s.produces}" for s in links if isinstance(s, Source)]),
                "tool_schemas": json.dumps(tool_schemas(cls), sort_keys=True),
                "library_fingerprint": fingerprint,
            }
        )
    return rows


def simulated_tool_names() -> set[str]:
    """Namespaced names of every world-model simulated tool."""
    return {f"{n}.{t}" for n, cls in all_services().items() for t, d in cls.tools.items() if d.simulated}
