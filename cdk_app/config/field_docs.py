"""Field descriptions of the config models: the docstring written under each field.

They are read from the models' source only when config/schema.json or the docs' reference pages are built, so
that loading a config (`validate`, after every edit) does not parse source code: pydantic's
use_attribute_docstrings would, for every model class, each time the model module is imported.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from functools import cache

from pydantic import BaseModel


@cache
def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> its docstring (cleaned as inspect.cleandoc does), inherited ones included."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if issubclass(cls, BaseModel) and cls.__module__.startswith("cdk_app."):
            docs.update(_own_docs(cls))
    return docs


def _own_docs(cls: type) -> dict[str, str]:
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body  # type: ignore[attr-defined]
    return {
        field.target.id: inspect.cleandoc(doc.value.value)
        for field, doc in zip(body, body[1:])
        if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
        and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)
    }


def models_under(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model class reachable from `root`'s fields (root included), by class name."""
    found: dict[str, type[BaseModel]] = {}

    def visit(annotation: typing.Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if found.setdefault(annotation.__name__, annotation) is annotation and annotation not in seen:
                seen.add(annotation)
                for field in annotation.model_fields.values():
                    visit(field.annotation)
            return
        for argument in typing.get_args(annotation):
            visit(argument)

    seen: set[type] = set()
    root.model_rebuild()  # resolves fields that refer to later modules (KitConfig.batch)
    visit(root)
    return found
