"""The config model's building blocks: strict scalars and the frozen base model, shared by every section."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Strict

# Scalars are strict: YAML `count: "3"` or `kubernetes_version: 1.30` (a float) are errors, not guesses.
Int = Annotated[int, Strict()]
Str = Annotated[str, Strict()]
Float = Annotated[float, Strict()]
Bool = Annotated[bool, Strict()]

# An environment's name: part of its stack names and of its file name (config/<environment>.yaml).
ENVIRONMENT_PATTERN = r"^[a-z][a-z0-9-]{0,19}$"
AZ_ID_PATTERN = r"^[a-z]{2,5}[0-9]-az[1-9][0-9]?$"  # no leading zero: use1-az04 is no zone id (and would share az4's subnets)
IAM_PRINCIPAL_PATTERN = r"^arn:aws[a-z-]*:(iam|sts)::[0-9]{12}:[A-Za-z0-9+=,.@_/-]+$"
SharingStrategy = Literal["Lend", "DontLend", "LendAndBorrow"]


class KitModel(BaseModel):
    # `validate` runs after every edit: its validator is built on first use (defer_build), for the classes
    # a command uses, and defaults below are made with model_construct so that defining a class builds none.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
