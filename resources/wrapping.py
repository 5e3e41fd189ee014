"""Resources wrap core configuration classes: each mirrored field takes the core default and description.

A resource declares the core fields it exposes with `mirror(CoreConfig, "name")` (so a default
changed in the core changes in the Dagster UI too) and builds the core object with
`core_config(resource, CoreConfig)`, which the core class validates. `WRAPPED` lists every pair;
a contract test checks that no resource drifts from its core class.
"""

from typing import Any, TypeVar

from pydantic import BaseModel, Field
from pydantic_core import PydanticUndefined

C = TypeVar("C", bound=BaseModel)


def mirror(core: type[BaseModel], name: str, default: Any = PydanticUndefined) -> Any:
    """A resource field with the core field's description and default (`default` for a required core field)."""
    info = core.model_fields[name]
    if info.is_required() and default is PydanticUndefined:
        raise TypeError(f"{core.__name__}.{name} has no default; give the resource one")
    return Field(
        default=info.default if default is PydanticUndefined else default, description=info.description
    )


def core_config(resource: BaseModel, core: type[C], **overrides: Any) -> C:
    """The core config built from the resource's same-named fields (plus overrides), validated by the core."""
    fields = type(resource).model_fields
    values = {name: getattr(resource, name) for name in core.model_fields if name in fields}
    return core.model_validate({**values, **overrides})
