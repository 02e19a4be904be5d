"""The registry's methods as command-line choices, checked when a command line is parsed (not when the CLI is
imported), so a method registered after the import (:func:`graphlink.registry.register`) is accepted too.
O(methods) per parse; imports nothing heavy."""

from __future__ import annotations

from graphlink import registry


class MethodChoice:
    """The parser of a ``--method`` option: a registered method of ``kind`` (:func:`graphlink.registry.names`),
    looked up when the value is checked; anything else is refused naming the choices (exit 2)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __call__(self, value: str) -> str:
        choices = registry.names(self.kind)
        if value not in choices:
            raise ValueError(f"{value!r} is not one of {', '.join(repr(c) for c in choices)}")
        return value

    def metavar(self) -> str:
        """The choices registered now, as ``--help`` shows them (``<a|b|c>``)."""
        return f"<{'|'.join(registry.names(self.kind))}>"
