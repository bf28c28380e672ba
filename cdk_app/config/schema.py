"""JSON Schema of the config, for editors (config/schema.json, referenced from each config file)."""

from __future__ import annotations

import json

from cdk_app.config.field_docs import field_docs, models_under
from cdk_app.config.model import KitConfig

SCHEMA_ID = "https://hyperpod-kit.invalid/config/schema.json"


def config_schema() -> dict:
    schema = KitConfig.model_json_schema(mode="validation")
    models = models_under(KitConfig)
    for name, definition in [(KitConfig.__name__, schema), *schema.get("$defs", {}).items()]:
        if "properties" not in definition:
            continue
        docs = field_docs(models[name])  # a KeyError here: a $defs entry that is no model class of the config
        for field, property_schema in definition["properties"].items():
            if field in docs:
                property_schema["description"] = docs[field]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def config_schema_text() -> str:
    return json.dumps(config_schema(), indent=2, sort_keys=True) + "\n"
