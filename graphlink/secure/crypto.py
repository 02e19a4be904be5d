"""Commutative encryption on ristretto255 for the STRANON / SCAMD protocol (thesis ch. 8.1.1, App. C.1).

The thesis instantiates the quasi-commutative one-way accumulator as RSA-style exponentiation
``h(x, y) = x^y mod n``. We use the same algebra in a prime-order elliptic-curve group instead
(Pohlig–Hellman style, the alternative the thesis's footnote 1 of ch. 8 mentions):

* a value ``x`` is mapped to a group element ``H(x) = ristretto255_from_hash(SHA-512(DOMAIN || len || x))``
  (Elligator map; nobody knows a discrete log of H(x), so ciphertexts cannot be related algebraically);
* a key is a uniformly random non-zero scalar ``e``; ``E_e(P) = e·P``; ``D_e(P) = e⁻¹·P`` (mod the group
  order ℓ), so ``E_a(E_b(P)) = E_b(E_a(P))`` for any set and order of keys (equation C.1) and decryption
  in any order recovers ``H(x)`` (equation C.2);
* equal plaintexts give equal ciphertexts under the same key set, unequal ones collide only with
  probability ≈ 2⁻²⁵² — the sTTP can make neither false equivalences nor false inequalities (§8.1.1).

Security (semi-honest): DDH in ristretto255 makes ``e·H(x)`` look random to anyone without ``e``. Keys are
fresh per run (never reuse: a reused key links sessions). ``H(x)`` itself is *not* secret for guessable x
(anyone can hash a dictionary), so an unencrypted hash point is treated as plaintext-equivalent
everywhere in this package. libsodium's scalar multiplication is constant time.

Cost: one scalar multiplication per element per key (≈ 18–20k/s per core via ``rbcl``);
``hash_points`` ≈ 70k/s.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import rbcl

POINT_BYTES = 32
SCALAR_BYTES = 32
DOMAIN = b"graphlink/stranon/v1/hash-to-ristretto255"

_from_hash = rbcl.crypto_core_ristretto255_from_hash
_smul = rbcl.crypto_scalarmult_ristretto255
_is_valid = rbcl.crypto_core_ristretto255_is_valid_point


class CryptoError(ValueError):
    """A received value is not a valid ristretto255 point, or a scalar multiplication failed."""


def hash_to_point(value: str | bytes, domain: bytes = DOMAIN) -> bytes:
    """Map ``value`` to a ristretto255 point: ``from_hash(SHA-512(domain || len(value) || value))``.

    The length prefix keeps (domain, value) splits unambiguous. O(1).
    """
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    h = hashlib.sha512(domain + len(data).to_bytes(8, "big") + data).digest()
    return _from_hash(h)


def hash_points(values: Iterable[str | bytes], domain: bytes = DOMAIN) -> list[bytes]:
    """``hash_to_point`` for many values. O(n)."""
    return [hash_to_point(v, domain) for v in values]


def random_point() -> bytes:
    """A uniformly random group element nobody knows a preimage of (used for dummies v_C, β, D_C)."""
    return _from_hash(secrets.token_bytes(64))


def validate_points(points: Sequence[bytes]) -> None:
    """Raise ``CryptoError`` unless every element is a canonical ristretto255 encoding. O(n)."""
    for p in points:
        if len(p) != POINT_BYTES or not _is_valid(p):
            raise CryptoError("received a value that is not a valid ristretto255 point")


@dataclass(eq=False)
class Key:
    """A commutative-encryption key pair ⟨ε, κ⟩ = ⟨e, e⁻¹ mod ℓ⟩ (thesis §8.1.1 / App. C.1).

    Both halves are private to the party that created the key. ``ops`` counts scalar multiplications
    done with this key (element-level encryptions + decryptions).
    """

    name: str = "key"
    scalar: bytes = field(default_factory=rbcl.crypto_core_ristretto255_scalar_random, repr=False)
    ops: int = 0

    def __post_init__(self) -> None:
        if len(self.scalar) != SCALAR_BYTES or self.scalar == bytes(SCALAR_BYTES):
            raise CryptoError("key scalar must be 32 bytes and non-zero")
        self.inverse = rbcl.crypto_core_ristretto255_scalar_invert(self.scalar)

    def encrypt(self, points: Sequence[bytes]) -> list[bytes]:
        """``[e·P for P in points]``. O(n) scalar multiplications."""
        self.ops += len(points)
        try:
            return [_smul(self.scalar, p) for p in points]
        except Exception as exc:  # libsodium refuses invalid points / identity results
            raise CryptoError(f"encryption failed: {exc}") from exc

    def decrypt(self, points: Sequence[bytes]) -> list[bytes]:
        """``[e⁻¹·P for P in points]``. O(n) scalar multiplications."""
        self.ops += len(points)
        try:
            return [_smul(self.inverse, p) for p in points]
        except Exception as exc:
            raise CryptoError(f"decryption failed: {exc}") from exc

    def secret_material(self) -> tuple[bytes, bytes]:
        """Both scalars (used only by tests that scan traffic for leaked keys)."""
        return self.scalar, self.inverse


def encrypt_many(keys: Sequence[Key], points: Sequence[bytes]) -> list[bytes]:
    """Apply several keys in order (the result is order-independent by commutativity)."""
    out = list(points)
    for k in keys:
        out = k.encrypt(out)
    return out
