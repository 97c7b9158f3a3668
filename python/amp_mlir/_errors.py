"""amp's errors: every failure of an amp call raises AmpError."""

from __future__ import annotations

import dataclasses

__all__ = ["AmpError", "Diagnostic"]


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of a failed call.

    ``node`` and ``op`` are the ONNX node and op type where the message
    names them (the importer's and the passes' messages do); ``file``,
    ``line`` and ``column`` come from the location.
    """

    severity: str
    message: str
    location: str = ""
    file: str = ""
    line: int = 0
    column: int = 0
    node: str = ""
    op: str = ""

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        return f"{self.severity}: {where}{self.message}"


class AmpError(Exception):
    """An amp call failed; ``diagnostics`` says why (errors first as
    reported, with their notes)."""

    def __init__(self, message: str, diagnostics=()):
        super().__init__(message)
        self.diagnostics: list[Diagnostic] = list(diagnostics)
