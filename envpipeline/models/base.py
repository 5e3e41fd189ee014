"""The one strict base of every stored model: unknown fields are an error."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base of every stored model: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid")
