"""Explicit protocol messages of STRANON / SCAMD (thesis Alg. 11, App. C Figs C.1–C.5) and their wire format.

Every message a party sends is one of the dataclasses below; parties never share objects, only the bytes
produced by :func:`encode` (the in-process network and the loopback-socket transport both carry exactly
these bytes, so what a party "sees" is what it decodes).

Wire format (one frame): ``u32 header_len | header JSON (utf-8) | point blobs``. The header holds the
message kind and all scalar fields; every ``list[bytes]`` field of 32-byte points is written as the
concatenation of its points (its length is in the header); ``bytes`` fields (unlock keys) are hex in
the header. Encoding/decoding is O(size).

:func:`decode` trusts nothing: a frame that is not exactly one well-formed message of a known kind (header
JSON without NaN/Infinity, every field of the type its message declares, points that are canonical
ristretto255 encodings, no trailing bytes) raises :class:`MessageError`, one line saying what is wrong.
"""

from __future__ import annotations

import json
import struct
from dataclasses import MISSING, dataclass, field, fields
from typing import ClassVar

from graphlink.secure.crypto import POINT_BYTES, CryptoError, validate_points

STTP = "sTTP"


class MessageError(ValueError):
    """A frame that is not one well-formed protocol message (its text is one line saying what is wrong)."""


@dataclass
class Message:
    """Base class: who sends, who receives, which protocol session."""

    sender: str
    recipient: str
    session: str
    kind: ClassVar[str] = "message"
    point_fields: ClassVar[tuple[str, ...]] = ()


@dataclass
class Setup(Message):
    """sTTP → location: session parameters and the common dummy value v_C (Theorem 11; None = no check)."""

    locations: list[str] = field(default_factory=list)
    k: int = 2
    method: str = "greedy-dedup-secure"
    common_dummy: list[bytes] = field(default_factory=list)   # [v_C] or []
    locking: bool = False
    kind: ClassVar[str] = "setup"
    point_fields: ClassVar[tuple[str, ...]] = ("common_dummy",)


@dataclass
class PublishIdentified(Message):
    """location → sTTP: the identified database γ_i, which the location publishes anyway (Alg. 11 line 3)."""

    identified: list[str] = field(default_factory=list)
    kind: ClassVar[str] = "publish-identified"


@dataclass
class _OwnedDataset(Message):
    """A dataset of points that belongs to ``owner`` and passes through another location's multi-party key."""

    owner: str = ""
    points: list[bytes] = field(default_factory=list)
    point_fields: ClassVar[tuple[str, ...]] = ("points",)


@dataclass
class _DecryptionDataset(_OwnedDataset):
    """An owned dataset on a decryption pass: ``purpose`` check (Thm 12, in check ``round``) or return."""

    purpose: str = "return"
    round: int = 0


@dataclass
class EncryptRequest(_OwnedDataset):
    """Owner → location x: please encrypt this dataset with your multi-party key (SCAMD Step 2)."""

    kind: ClassVar[str] = "encrypt-request"


@dataclass
class EncryptReply(_OwnedDataset):
    """location x → owner: the dataset encrypted with x's multi-party key, same order."""

    kind: ClassVar[str] = "encrypt-reply"


@dataclass
class DecryptRequest(_DecryptionDataset):
    """Owner → location x: please decrypt with your multi-party key. purpose: check (Thm 12) | return."""

    kind: ClassVar[str] = "decrypt-request"


@dataclass
class DecryptReply(_DecryptionDataset):
    """location x → owner: the dataset decrypted with x's multi-party key, same order."""

    kind: ClassVar[str] = "decrypt-reply"


@dataclass
class Submission(Message):
    """location → sTTP: fully encrypted h(ω_i) (Alg. 11 line 12) and the fully encrypted v_C."""

    points: list[bytes] = field(default_factory=list)
    common_dummy: list[bytes] = field(default_factory=list)
    kind: ClassVar[str] = "submission"
    point_fields: ClassVar[tuple[str, ...]] = ("points", "common_dummy")


@dataclass
class Return(Message):
    """sTTP → location: N_i ⊆ h(ω_i), the encrypted values it may disclose (Alg. 11 line 14)."""

    points: list[bytes] = field(default_factory=list)
    kind: ClassVar[str] = "return"
    point_fields: ClassVar[tuple[str, ...]] = ("points",)


@dataclass
class LockedReturn(Message):
    """sTTP → location (lock-out, Thm 13): h(h([D_C, return_l], y_C^l), all y^m) shuffled, and h(D_C, y_C^l)."""

    points: list[bytes] = field(default_factory=list)
    blinded_dummies: list[bytes] = field(default_factory=list)
    kind: ClassVar[str] = "locked-return"
    point_fields: ClassVar[tuple[str, ...]] = ("points", "blinded_dummies")


@dataclass
class DecryptionReport(Message):
    """location → sTTP: whether h(D_C, y_C^l) came back intact after full decryption (Thm 13)."""

    ok: bool = True
    kind: ClassVar[str] = "decryption-report"


@dataclass
class Unlock(Message):
    """sTTP → location: the decryption half z_C^l of the sTTP's one-time blinding key for l (Thm 13)."""

    key: bytes = b""
    kind: ClassVar[str] = "unlock"


@dataclass
class Alarm(Message):
    """location → sTTP: an integrity check failed (Thm 12: a decryption check came back wrong)."""

    reason: str = ""
    kind: ClassVar[str] = "alarm"


@dataclass
class Abort(Message):
    """sTTP → location: the run is stopped (Thm 11 mismatch, an alarm, or a failed decryption report)."""

    reason: str = ""
    kind: ClassVar[str] = "abort"


@dataclass
class Preview(Message):
    """sTTP → location c_j (contributor veto round, our extension): the planned disclosure as c_j will see it
    once published — per location the number of values it will disclose, and which of them are values
    c_j itself submitted (as the fully encrypted ciphertexts c_j already holds) — plus the public γ's."""

    counts: dict = field(default_factory=dict)
    known: list[bytes] = field(default_factory=list)
    known_at: list[str] = field(default_factory=list)
    gamma: dict = field(default_factory=dict)
    round: int = 0
    kind: ClassVar[str] = "preview"
    point_fields: ClassVar[tuple[str, ...]] = ("known",)


@dataclass
class PreviewVerdict(Message):
    """location → sTTP: whether its contributor view (Def. 25) of the planned disclosure is k-unlinkable,
    and which disclosing locations carry the violations."""

    ok: bool = True
    blame: list[str] = field(default_factory=list)
    round: int = 0
    kind: ClassVar[str] = "preview-verdict"


@dataclass
class Finished(Message):
    """location → sTTP: the location has recovered its disclosable set (only its size is reported)."""

    disclosed: int = 0
    kind: ClassVar[str] = "finished"


MESSAGE_TYPES: dict[str, type[Message]] = {
    cls.kind: cls
    for cls in (Setup, PublishIdentified, EncryptRequest, EncryptReply, DecryptRequest, DecryptReply,
                Submission, Return, LockedReturn, DecryptionReport, Unlock, Alarm, Abort, Preview, PreviewVerdict,
                Finished)
}


def encode(msg: Message) -> bytes:
    """Serialise a message to one frame (see module doc). O(size)."""
    header: dict = {"kind": msg.kind}
    blobs: list[bytes] = []
    for f in fields(msg):
        value = getattr(msg, f.name)
        if f.name in msg.point_fields:
            header[f.name] = len(value)
            blobs.append(b"".join(value))
        elif isinstance(value, bytes):
            header[f.name] = {"__hex__": value.hex()}
        else:
            header[f.name] = value
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return struct.pack(">I", len(h)) + h + b"".join(blobs)


def _reject_constant(name: str) -> None:
    raise MessageError(f"the header holds {name}, which is not a JSON number")


def _check_value(cls: type[Message], name: str, value: object, default: object) -> None:
    """``value`` must have the type of the field's default (lists of strings stay lists of strings; the
    Preview's dicts map names to counts or to lists of names).  O(size of the value)."""
    bad = f"{cls.kind}: field {name!r} has the wrong type"
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, list):
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
    elif isinstance(default, dict):
        ok = isinstance(value, dict) and all(
            isinstance(v, int) and not isinstance(v, bool) if name == "counts"
            else isinstance(v, list) and all(isinstance(x, str) for x in v) for v in value.values())
    else:
        ok = False
    if not ok:
        raise MessageError(bad)


def _defaults(cls: type[Message]) -> dict[str, object]:
    out: dict[str, object] = {}
    for f in fields(cls):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
        else:                                     # sender, recipient, session
            out[f.name] = ""
    return out


def decode(frame: bytes) -> Message:
    """Parse one frame; every point is checked to be a valid ristretto255 encoding. O(size).

    Raises :class:`MessageError` for anything but one well-formed message (see the module docstring)."""
    if len(frame) < 4:
        raise MessageError("frame shorter than its header length")
    (hlen,) = struct.unpack(">I", frame[:4])
    if hlen > len(frame) - 4:
        raise MessageError("header length beyond the end of the frame")
    try:
        header = json.loads(frame[4 : 4 + hlen].decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MessageError(f"the header is not UTF-8 JSON ({exc.__class__.__name__})") from None
    except RecursionError:
        raise MessageError("the header is nested too deeply") from None
    if not isinstance(header, dict) or not isinstance(header.get("kind"), str):
        raise MessageError("the header is not an object with a message kind")
    cls = MESSAGE_TYPES.get(header.pop("kind"))
    if cls is None:
        raise MessageError("unknown message kind")
    defaults = _defaults(cls)
    unknown = set(header) - set(defaults)
    if unknown:
        raise MessageError(f"{cls.kind}: unknown field(s) {', '.join(sorted(map(repr, unknown)))}")
    missing = {"sender", "recipient", "session"} - set(header)
    if missing:
        raise MessageError(f"{cls.kind}: missing field(s) {', '.join(sorted(missing))}")
    pos = 4 + hlen
    kwargs = {}
    for name, default in defaults.items():
        if name not in header:
            continue
        value = header[name]
        if name in cls.point_fields:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise MessageError(f"{cls.kind}: point count {name!r} is not a non-negative integer")
            end = pos + value * POINT_BYTES
            if end > len(frame):
                raise MessageError(f"{cls.kind}: {value} points of {name!r} run past the end of the frame")
            pts = [frame[i : i + POINT_BYTES] for i in range(pos, end, POINT_BYTES)]
            pos = end
            try:
                validate_points(pts)
            except CryptoError as exc:
                raise MessageError(f"{cls.kind}: {exc}") from None
            kwargs[name] = pts
        elif isinstance(default, bytes):
            if not (isinstance(value, dict) and set(value) == {"__hex__"} and isinstance(value["__hex__"], str)):
                raise MessageError(f"{cls.kind}: field {name!r} has the wrong type")
            try:
                kwargs[name] = bytes.fromhex(value["__hex__"])
            except ValueError:
                raise MessageError(f"{cls.kind}: field {name!r} is not hex") from None
        else:
            _check_value(cls, name, value, default)
            kwargs[name] = value
    if pos != len(frame):
        raise MessageError("trailing bytes in message frame")
    return cls(**kwargs)


def n_records(msg: Message) -> int:
    """Number of 32-byte records (points) the message carries — the unit of App. C.3.2 bandwidth."""
    return sum(len(getattr(msg, name)) for name in msg.point_fields)
