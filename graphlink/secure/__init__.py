"""Secure unlinking: STRANON (thesis ch. 8, Alg. 11) over SCAMD (App. C) with ristretto255 commutative
encryption; Greedy-/Force-Dedup-Secure (Alg. 12/14), Contributor-Clean (Alg. 13), external / central /
contributor k-unlinkability checks, App. D bounds, integrity checks (Thms 11–13) and cost counters."""

from __future__ import annotations


def secure_unlink(release, k: int, method: str, seed: int | None = None, **kwargs):
    """Protect ``release`` at ``k`` with STRANON, no party seeing another's data: the full description is
    :func:`graphlink.secure.api.secure_unlink` (imported on the first call, to keep ``import graphlink`` light).

    Parameters
    ----------
    release : Release
        A one-to-one release; its truth, when present, gives each location its own private pairing.
    k : int
        The protection level (Definition 19).
    method : {"greedy-dedup", "force-dedup"}
        The Dedup method the protocol runs (Alg. 12 or 14); the ``-secure`` names are accepted too.
    seed : int, optional
        Accepted for the signature shared with :func:`graphlink.protect.unlink` and not used: the protocol's
        randomness comes from the operating system.
    **kwargs
        The protocol's options (``processes``, ``alpha``, ``beta``, ``locking``, ...).

    Returns
    -------
    SecureUnlinkOutput
        ``(release, report)``: the protected release and what the protocol did, with its audits.

    Examples
    --------
    Whichever records the protocol's random choices withhold, the result is 2-unlinkable:

    >>> import graphlink as gl
    >>> from graphlink.secure import secure_unlink
    >>> protected, report = secure_unlink(gl.thesis_example(), 2, "force-dedup")
    >>> report["aborted"], gl.audit(gl.build_linkgraph(gl.build_trails(protected)), 2).k_unlinkable
    (None, True)
    """
    from graphlink.secure.api import secure_unlink as _impl

    return _impl(release, k, method, seed, **kwargs)


__all__ = ["secure_unlink"]
