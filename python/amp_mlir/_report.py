"""The autocast report: the JSON amp-opt --amp-report writes, as data."""

from __future__ import annotations

import json
import os

__all__ = ["NumericsReport", "Report"]


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

    def to_html(self, path=None):
        """The report as one self-contained HTML page (summary, a graph of
        the node-name hierarchy coloured by precision, a table of the ops to
        filter and sort), byte for byte what ``amp-opt
        --amp-report-html`` writes. Returns the page, or writes it to
        ``path``."""
        from . import _amp_mlir

        html = _amp_mlir.report_html(self._text)
        if path is None:
            return html
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(html)
        return None

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


class NumericsReport:
    """Per-op numerics of a low-precision program against fp32 (the data
    behind ``amp-run --check-numerics``).

    ``to_json()`` is byte for byte the file ``amp-run
    --check-numerics=FILE`` writes for the same model, inputs and options.
    Each op record: ``index``, ``result``, ``node``, ``op``, ``precision``,
    ``reason``, ``elements``, ``non_finite`` (Inf/NaN where fp32 is finite),
    ``nonzero``, ``underflow`` (of those, zero or subnormal in low
    precision), ``underflow_fraction``, ``max_abs_error``,
    ``max_abs_reference``, ``relative_error``. ``outputs`` are the
    low-precision program's own outputs.
    """

    def __init__(self, text: str, outputs: list):
        self._text = text
        self._data = json.loads(text)
        self.outputs = outputs

    def to_json(self) -> str:
        return self._text

    def to_dict(self) -> dict:
        return json.loads(self._text)

    @property
    def type(self) -> str:
        return self._data["type"]

    @property
    def ops(self) -> list:
        return [dict(op) for op in self._data["ops"]]

    @property
    def first_non_finite(self):
        """The first op (in program order) whose output has Inf or NaN where
        fp32's is finite, or None."""
        op = self._data["first_non_finite"]
        return dict(op) if op is not None else None

    @property
    def underflow(self) -> list:
        """Ops losing more than the threshold of their nonzero values to
        zero or subnormals, in program order."""
        return [dict(op) for op in self._data["underflow"]]

    def worst(self, n: int = 10) -> list:
        """The ``n`` ops with the largest relative error."""
        return sorted(self.ops, key=lambda op: op["relative_error"], reverse=True)[:n]

    def __repr__(self) -> str:
        first = self.first_non_finite
        where = f"first non-finite at {first['node']!r}" if first else "no non-finite values"
        return (f"<amp_mlir.NumericsReport {self.type}: {len(self._data['ops'])} op outputs, "
                f"{where}, {len(self._data['underflow'])} underflowing>")
