"""The autocast report: the JSON amp-opt --amp-report writes, as data."""

from __future__ import annotations

import json

__all__ = ["Report"]


class Report:
    """What autocast decided, op by op.

    ``to_json()`` is byte for byte the file ``amp-opt --amp-report``
    writes for the same model and options. ``to_dict()["summary"]`` holds
    ``casts`` (the number amp-opt prints), the FLOP shares and the op
    counts per precision; ``to_dict()["ops"]`` one record per op (node, op,
    precision, class, reason, flops).
    """

    def __init__(self, text: str):
        self._text = text
        self._data = json.loads(text)

    def to_json(self) -> str:
        return self._text

    def to_dict(self) -> dict:
        return json.loads(self._text)

    @property
    def type(self) -> str:
        """The low-precision type ("f16" or "bf16")."""
        return self._data["type"]

    @property
    def summary(self) -> dict:
        return dict(self._data["summary"])

    @property
    def casts(self) -> int:
        return int(self._data["summary"]["casts"])

    @property
    def ops(self) -> list:
        return [dict(op) for op in self._data["ops"]]

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {p}" for p, n in self._data["summary"]["ops"].items())
        return f"<amp_mlir.Report {self.type}: {counts}; {self.casts} casts>"
