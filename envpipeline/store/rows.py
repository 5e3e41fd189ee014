"""The one row codec: pydantic records <-> flat lake rows, used by every asset and CLI command.

A lake row is flat so DuckDB can filter on it: a record's scalar fields become columns and its
nested fields (lists, dicts, models) become canonical JSON strings. A codec can also *embed* the
whole record as one JSON column (for deep records such as a gated world task) next to scalar
columns projected out of it, and add *derived* columns (counts, flattened ids) for queries.
Decoding ignores lineage columns (``_asset``, ``_run_id``, ...) and derived columns.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

from envpipeline.errors import StoreError

M = TypeVar("M", bound=BaseModel)
_SCALARS = (str, int, float, bool, type(None))


def to_json(value: Any) -> str:
    """The JSON text a nested value is stored as (sorted keys, compact)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _is_scalar(annotation: Any) -> bool:
    """Whether a field's type is a plain scalar (or a union/literal of scalars)."""
    origin = get_origin(annotation)
    if origin is None:
        return isinstance(annotation, type) and issubclass(annotation, _SCALARS)
    if origin in (Union, types.UnionType):
        return all(_is_scalar(arg) for arg in get_args(annotation))
    if str(origin) == "typing.Literal":
        return all(isinstance(arg, _SCALARS) for arg in get_args(annotation))
    if str(origin).endswith("Annotated"):
        return _is_scalar(get_args(annotation)[0])
    return False


class RowCodec(Generic[M]):
    """How one record model is stored as lake rows.

    Args:
        model: the pydantic record class.
        embed: store the whole record as JSON in this column (else one column per field).
        derived: extra columns computed from a record (for queries; ignored when decoding).
        renamed: field name -> column name (e.g. to avoid the reserved column names).
    """

    def __init__(
        self,
        model: type[M],
        *,
        embed: str | None = None,
        derived: Callable[[M], dict[str, Any]] | None = None,
        renamed: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.embed = embed
        self.derived = derived
        self.renamed = dict(renamed or {})
        self.nested = frozenset(
            name for name, info in model.model_fields.items() if not _is_scalar(info.annotation)
        )

    def encode(self, record: M, **extra: Any) -> dict[str, Any]:
        """One flat row; `extra` adds columns that are not part of the record (e.g. a folder)."""
        return self.encode_dumped(
            record, record.model_dump(mode="json") if self.embed is None else {}, **extra
        )

    def encode_dumped(self, record: M, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """`encode` for a caller that already holds ``record.model_dump(mode="json")`` as `data`
        (left unchanged), so a record written to two places is dumped once."""
        row: dict[str, Any] = {}
        if self.embed is None:
            for name, value in data.items():
                row[self.renamed.get(name, name)] = to_json(value) if name in self.nested else value
        if self.derived is not None:
            row.update(self.derived(record))
        row.update(extra)
        if self.embed is not None:
            row[self.embed] = record.model_dump_json()
        return row

    def encode_all(self, records: Iterable[M]) -> list[dict[str, Any]]:
        """Rows of many records, in order."""
        return [self.encode(r) for r in records]

    def decode(self, row: Mapping[str, Any]) -> M:
        """The record a row holds (lineage and derived columns are ignored)."""
        try:
            if self.embed is not None:
                return self.model.model_validate_json(row[self.embed])
            columns = {column: name for name, column in self.renamed.items()}
            data: dict[str, Any] = {}
            for key, value in row.items():
                name = columns.get(key, key)
                if name not in self.model.model_fields:
                    continue
                data[name] = json.loads(value) if name in self.nested and isinstance(value, str) else value
            return self.model.model_validate(data)
        except (KeyError, ValueError) as e:
            raise StoreError(f"a {self.model.__name__} row cannot be decoded: {e}") from e

    def decode_all(self, rows: Iterable[Mapping[str, Any]]) -> list[M]:
        """Records of many rows, in order."""
        return [self.decode(r) for r in rows]
