"""Markdown tables of the config model and the finding codes, for the documentation's reference pages.

scripts/docs_reference.py writes them into docs/reference/config.md and findings.md when the site is built.
"""

from __future__ import annotations

import typing

from pydantic import BaseModel

from cdk_app.config.field_docs import field_docs
from cdk_app.config.loader import inner_model
from cdk_app.config.model import KitConfig
from cdk_app.findings import CODES


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    docs = field_docs(model)
    for name, field in model.model_fields.items():
        path = prefix + name
        if field.is_required():
            default = "required"
        elif isinstance(field.default, BaseModel):
            default = "see below"
        else:
            default = f"`{field.default!r}`"
        text = " ".join(docs.get(name, '').split()).replace('|', '/')
        rows.append(f"| `{path}` | {default} | {text} |")
        inner = inner_model(field.annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            is_list = "tuple[" in str(field.annotation) or typing.get_origin(field.annotation) is tuple
            rows += _rows(inner, path + ("[]." if is_list else "."))
    return rows


def config_reference_markdown() -> str:
    KitConfig.model_rebuild()  # resolves fields that refer to later modules (KitConfig.batch)
    return "\n".join(["| key | default | meaning |", "| --- | --- | --- |", *_rows(KitConfig, "")])


def codes_markdown() -> str:
    return "\n".join(["| code | meaning |", "| --- | --- |", *(f"| {c} | {m} |" for c, m in CODES.items())])
