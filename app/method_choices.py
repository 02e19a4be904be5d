"""The methods the pages offer, as the library's method registry lists them (``graphlink.registry``).

The pages never name a method themselves: the registry's order, titles and specs decide what a selector lists and
how a result is read, so a method added to the registry appears in the app without a change here.
"""

from __future__ import annotations

from graphlink import registry


def reidentify_methods() -> list[str]:
    """The re-identification methods the pages offer: the registry's (:mod:`graphlink.registry`), in its order."""
    return list(registry.names("reidentify"))


def protect_methods() -> list[str]:
    """The protection methods the Protect page offers: the registry's, in its order."""
    return list(registry.names("protect"))


def secure_methods() -> list[str]:
    """The protection methods the secure protocol runs (the registry's ``secure`` specs)."""
    return list(registry.secure_names())


def method_title(method: str) -> str:
    """A method's name as the app shows it (its registry heading, e.g. "True loves (exact)")."""
    spec = registry.find(method)
    return spec.title if spec is not None else method


def method_spec(method: str) -> registry.MethodSpec:
    """The registry's spec of ``method`` (:class:`graphlink.registry.MethodSpec`)."""
    return registry.get(method)
