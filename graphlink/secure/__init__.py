"""Secure unlinking: STRANON (thesis ch. 8, Alg. 11) over SCAMD (App. C) with ristretto255 commutative
encryption; Greedy-/Force-Dedup-Secure (Alg. 12/14), Contributor-Clean (Alg. 13), external / central /
contributor k-unlinkability checks, App. D bounds, integrity checks (Thms 11–13) and cost counters."""

from __future__ import annotations


def secure_unlink(release, k: int, method: str, seed: int | None = None, **kwargs):
    """See :func:`graphlink.secure.api.secure_unlink` (imported lazily to keep ``import graphlink`` light)."""
    from graphlink.secure.api import secure_unlink as _impl

    return _impl(release, k, method, seed, **kwargs)


__all__ = ["secure_unlink"]
