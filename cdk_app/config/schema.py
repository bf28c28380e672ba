"""JSON Schema of the config, for editors (config/schema.json, referenced from each config file)."""

from __future__ import annotations

import json

from cdk_app.config.model import KitConfig

SCHEMA_ID = "https://hyperpod-kit.invalid/config/schema.json"


def config_schema() -> dict:
    schema = KitConfig.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def config_schema_text() -> str:
    return json.dumps(config_schema(), indent=2, sort_keys=True) + "\n"
