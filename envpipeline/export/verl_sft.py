"""verl multi-turn SFT on our ``verl-sft`` rows: a dataset class that decodes the JSON columns.

Our SFT ``messages`` / ``tools`` are Parquet JSON values (no null padding; see `rows`). verl's
``MultiTurnSFTDataset`` (verl 0.9.1, ``verl/utils/dataset/multiturn_sft_dataset.py``) reads Parquet
with pandas, which hands those values over as JSON text, not dicts. ``EnvpipelineSFTDataset`` is that
class with one extra step after reading: each JSON value is decoded once. Point verl's SFT trainer
at it (``verl.trainer.sft_trainer.create_sft_dataset`` honours ``data.custom_cls``)::

    data.custom_cls.path=pkg://envpipeline.export.verl_sft \\
    data.custom_cls.name=EnvpipelineSFTDataset \\
    data.messages_key=messages data.tools_key=tools data.max_length=<the card's max_length>

verl is imported only when the class is first asked for (``EnvpipelineSFTDataset`` is built on
attribute access), so this module imports without verl.
"""

from __future__ import annotations

import functools
import importlib
import json
from typing import Any

__all__ = ["decode_json_value"]  # and EnvpipelineSFTDataset, built on first access (needs verl)

VERL_DATASET_MODULE = "verl.utils.dataset.multiturn_sft_dataset"


def decode_json_value(value: Any) -> Any:
    """A JSON-column value as verl wants it: JSON text -> object, a list of JSON texts -> objects;
    anything already decoded (a dict, a list of dicts, None) is returned as it is."""
    if isinstance(value, str):
        return json.loads(value)
    if isinstance(value, list | tuple) or type(value).__name__ == "ndarray":
        return [json.loads(item) if isinstance(item, str) else item for item in value]
    return value


@functools.cache
def _dataset_class() -> type:
    base: Any = importlib.import_module(VERL_DATASET_MODULE).MultiTurnSFTDataset

    class EnvpipelineSFTDataset(base):  # pyright: ignore[reportUntypedBaseClass] - verl is optional
        """verl's ``MultiTurnSFTDataset`` reading our JSON ``messages`` / ``tools`` columns as objects."""

        def _read_files_and_process(self) -> None:
            super()._read_files_and_process()
            for column in (self.messages_key, self.tools_key):
                if column in self.dataframe.columns:
                    decoded = [decode_json_value(v) for v in self.dataframe[column].tolist()]
                    self.dataframe[column] = _object_series(decoded, self.dataframe.index)
            self.messages = [decode_json_value(m) for m in self.messages]
            if self.tools is not None:
                self.tools = [decode_json_value(t) for t in self.tools]

    return EnvpipelineSFTDataset


def _object_series(values: list[Any], index: Any) -> Any:
    pandas: Any = importlib.import_module("pandas")
    return pandas.Series(values, index=index, dtype=object)


def __getattr__(name: str) -> Any:
    if name == "EnvpipelineSFTDataset":
        return _dataset_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
