"""The parties of STRANON (thesis Alg. 11) over SCAMD (App. C): ``Location`` and ``SemiTrustedThirdParty``.

One module per role: :mod:`~graphlink.secure.parties.location`, :mod:`~graphlink.secure.parties.sttp`, and
:mod:`~graphlink.secure.parties.shared` (cost counters, the ``Party`` base class, adversarial ``Behaviour``,
the in-process ``LocalNetwork``).

Each party is a message-driven state machine: ``handle(message) -> [messages to send]`` (plus ``start()``
for the sTTP). Parties share no objects; the in-process network (``LocalNetwork``) and the loopback
transport (``transport.py``) deliver the serialised bytes, so a party only ever sees what it decodes.

Protocol (semi-honest core = Alg. 11 / SCAMD Steps 1–5, with the App. C.3 extensions switchable):

1. sTTP → every location: ``Setup`` (k, method, the common dummy v_C of Theorem 11, locking flag). With
   locking the sTTP also runs its dummy set D_C through every location's encryption (Thm 13).
2. location l: publishes γ_l (``PublishIdentified``); takes H(ω_l) + [v_C] + β own dummies, shuffles,
   blinds with y_l^b, encrypts with y_l^m, and sends the set to every other location in turn
   (``EncryptRequest``/``EncryptReply``); then strips y_l^b.
3. Integrity (Thm 12): α rounds; each blinds the fully encrypted set with a fresh check key, shuffles,
   has every location decrypt it (``DecryptRequest`` purpose=check), strips the check key and compares
   with H(ω_l ∪ {v_C} ∪ dummies). Mismatch ⇒ ``Alarm``.
4. l → sTTP: ``Submission`` (data without the β dummies, and the encrypted v_C separately).
5. sTTP: Theorem 11 check (all encrypted v_C equal, else ``Abort``), runs Greedy-/Force-Dedup-Secure,
   optionally certifies and repairs, and returns N_l ⊆ h(ω_l): plainly (``Return``; l then blinds with its
   recollection key y_l^r and has everyone decrypt) or locked (``LockedReturn``: [D_C, N_l] blinded with a
   one-time y_C^l, plus h(D_C, y_C^l)); after full decryption l reports whether h(D_C, y_C^l) came back
   (``DecryptionReport``); only when all report ok does the sTTP send each l its ``Unlock`` key z_C^l.
6. l maps the recovered H-points back to its own plaintext (it alone has the dictionary) and discloses.

Adversarial behaviours (``Behaviour``) reproduce App. C.3.1: full / partial key switch against a victim,
refusing to decrypt the victim's return, and grab-and-go with f targeted values.
"""

from graphlink.secure.parties.location import Location
from graphlink.secure.parties.shared import Behaviour, Costs, LocalNetwork, Party, send_frame
from graphlink.secure.parties.sttp import SemiTrustedThirdParty

__all__ = ["Behaviour", "Costs", "LocalNetwork", "Location", "Party", "SemiTrustedThirdParty", "send_frame"]
