"""Commutative encryption on ristretto255 (thesis §8.1.1, App. C.1) and the message wire format."""

from __future__ import annotations

import itertools
import random

import pytest
import rbcl
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.secure import messages as M
from graphlink.secure.crypto import (
    CryptoError,
    Key,
    encrypt_many,
    hash_points,
    hash_to_point,
    random_point,
    validate_points,
)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=20), min_size=1, max_size=5), st.integers(2, 4), st.randoms())
def test_commutativity_any_order_and_inversion(values, n_keys, rnd):
    """C.1: h(h(x, e_i), e_j) = h(h(x, e_j), e_i) for any order; C.2: decryption in any order inverts."""
    keys = [Key(f"k{i}") for i in range(n_keys)]
    pts = hash_points(values)
    ref = encrypt_many(keys, pts)
    order = list(keys)
    rnd.shuffle(order)
    assert encrypt_many(order, pts) == ref
    dec_order = list(keys)
    rnd.shuffle(dec_order)
    cur = ref
    for k in dec_order:
        cur = k.decrypt(cur)
    assert cur == pts


def test_all_permutations_of_three_keys_agree():
    keys = [Key() for _ in range(3)]
    p = [hash_to_point("actg")]
    outs = {tuple(encrypt_many(perm, p)) for perm in itertools.permutations(keys)}
    assert len(outs) == 1


def test_equality_is_preserved_and_distinct_values_stay_distinct():
    """The sTTP can make no false equivalences nor false inequalities (§8.1.1)."""
    a, b = Key(), Key()
    vals = [f"s{i:05d}" for i in range(300)]
    enc1 = encrypt_many([a, b], hash_points(vals))
    enc2 = encrypt_many([b, a], hash_points(vals))
    assert enc1 == enc2
    assert len(set(enc1)) == len(vals)


def test_fresh_keys_differ_and_ciphertexts_depend_on_key():
    p = [hash_to_point("x")]
    k1, k2 = Key(), Key()
    assert k1.scalar != k2.scalar
    assert k1.encrypt(p) != k2.encrypt(p)
    assert k1.encrypt(p) != p


def test_domain_separation_and_length_prefix():
    assert hash_to_point("ab") != hash_to_point("ab", domain=b"other-domain")
    assert hash_to_point(b"ab") == hash_to_point("ab")
    assert hash_to_point("a") != hash_to_point("b")


def test_inverse_is_the_scalar_inverse():
    k = Key()
    one = rbcl.crypto_core_ristretto255_scalar_mul(k.scalar, k.inverse)
    assert one == (1).to_bytes(32, "little")


def test_invalid_points_and_zero_key_rejected():
    with pytest.raises(CryptoError):
        validate_points([b"\xff" * 32])
    with pytest.raises(CryptoError):
        Key(scalar=bytes(32))
    validate_points([random_point(), hash_to_point("z")])


def test_op_counter():
    k = Key()
    k.decrypt(k.encrypt(hash_points(["a", "b", "c"])))
    assert k.ops == 6


def test_message_roundtrip_every_kind():
    rng = random.Random(0)
    pts = [random_point() for _ in range(5)]
    samples = [
        M.Setup("sTTP", "H1", "s", locations=["H1", "H2"], k=3, method="force-dedup-secure",
                common_dummy=pts[:1], locking=True),
        M.PublishIdentified("H1", "sTTP", "s", identified=["Ali", "Bob"]),
        M.EncryptRequest("H1", "H2", "s", owner="H1", points=pts),
        M.EncryptReply("H2", "H1", "s", owner="H1", points=pts[::-1]),
        M.DecryptRequest("H1", "H2", "s", owner="H1", purpose="check", round=2, points=pts),
        M.DecryptReply("H2", "H1", "s", owner="H1", purpose="check", round=2, points=pts),
        M.Submission("H1", "sTTP", "s", points=pts[:3], common_dummy=pts[3:4]),
        M.Return("sTTP", "H1", "s", points=pts[:2]),
        M.LockedReturn("sTTP", "H1", "s", points=pts, blinded_dummies=pts[:2]),
        M.DecryptionReport("H1", "sTTP", "s", ok=False),
        M.Unlock("sTTP", "H1", "s", key=Key().inverse),
        M.Alarm("H1", "sTTP", "s", reason="x"),
        M.Abort("sTTP", "H1", "s", reason="y"),
        M.Preview("sTTP", "H1", "s", counts={"H1": 2, "hex": 0}, known=pts[:2], known_at=["H1", "H2"],
                  gamma={"H1": ["Ali"], "hex": []}, round=1),
        M.PreviewVerdict("H1", "sTTP", "s", ok=False, blame=["H2"], round=1),
        M.Finished("H1", "sTTP", "s", disclosed=rng.randint(0, 9)),
    ]
    assert {m.kind for m in samples} == set(M.MESSAGE_TYPES)
    for m in samples:
        frame = M.encode(m)
        back = M.decode(frame)
        assert back == m
        assert M.n_records(back) == M.n_records(m)


def test_decode_rejects_invalid_point_and_trailing_bytes():
    frame = M.encode(M.Return("sTTP", "H1", "s", points=[random_point()]))
    bad = frame[:-32] + b"\xff" * 32
    with pytest.raises(M.MessageError, match="ristretto255"):
        M.decode(bad)
    with pytest.raises(ValueError):
        M.decode(frame + b"\x00")
