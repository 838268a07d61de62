"""JSON read strictly: an object that names a key twice is refused, where ``json.loads`` keeps the last value
without a word (offload and join parameters in traces, the ``machine.json`` a model reads)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["RepeatedKey", "loads_keys_once"]


class RepeatedKey(ValueError):
    """A JSON object that names a key twice; ``key`` is the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} named twice")
        self.key = key

    def __reduce__(self) -> tuple:
        return type(self), (self.key,)


def _object_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A decoded JSON object, or RepeatedKey for one that names a key twice."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise RepeatedKey(key)
        obj[key] = value
    return obj


def loads_keys_once(text: str) -> Any:
    """``json.loads(text)``, raising RepeatedKey for an object that names a key twice (and, as ``json.loads``,
    json.JSONDecodeError for text that is not JSON, RecursionError for nesting too deep to decode)."""
    return json.loads(text, object_pairs_hook=_object_once)
