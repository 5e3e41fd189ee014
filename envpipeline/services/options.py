"""Which tool arguments take one of a few options (a priority, a status) rather than free text.

A record a task creates is pinned but for its text (`envpipeline.rubric.created_part`): the agent
words a title or a description its own way. An option is no wording: a ticket created 'urgent' or
'closed' when nobody asked is another ticket. An argument is an option when its type lists its
values (``Literal``: an imported schema's ``enum``) or, for a plain text argument, when its
description is nothing but a list of at least three one-word values ("low, normal, high or
urgent", the curated services' way of writing an enum).
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Iterable
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from envpipeline.services.base import ToolDef

#: A description that only lists values: "a, b or c", "a, b, c, or d" (three values or more).
_VALUE_LIST = re.compile(r"^\s*[\w-]+(?:\s*,\s*[\w-]+)+\s*,?\s+or\s+[\w-]+\s*\.?\s*$")
_SEPARATORS = re.compile(r"\s*,\s*or\s+|\s*,\s*|\s+or\s+")


def without_none(annotation: Any) -> Any:
    """`X` for an annotation `X | None` (or Optional[X]); any other annotation as it is."""
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return options[0] if len(options) == 1 else annotation
    return annotation


def argument_options(info: FieldInfo) -> tuple[str, ...] | None:
    """The values an argument may take when it takes one of a few options, else None."""
    annotation = without_none(info.annotation)
    if get_origin(annotation) is Literal:
        return tuple(str(v) for v in get_args(annotation))
    description = info.description or ""
    if annotation is str and _VALUE_LIST.match(description):
        return tuple(v for v in _SEPARATORS.split(description.strip().rstrip(".")) if v)
    return None


@functools.cache
def option_arguments(args_model: type[BaseModel]) -> frozenset[str]:
    """The arguments of a tool (by name and by alias) that take one of a few options."""
    names: set[str] = set()
    for name, info in args_model.model_fields.items():
        if argument_options(info) is not None:
            names.add(name)
            if info.alias:
                names.add(info.alias)
    return frozenset(names)


def write_options(tools: Iterable[ToolDef]) -> frozenset[str]:
    """The arguments of a service's write tools that take one of a few options: the fields of the
    records they create held as values (`envpipeline.rubric.preservation_of`)."""
    return frozenset().union(*(option_arguments(t.args_model) for t in tools if t.writes))
