"""The attacker who knows keep-most (a minimality attack, Wong et al. 2007), measured on small simulated releases.

For each small release O (uniform visits, a few subjects, three or four locations, part of the de-identified records
withheld, or none with ``--withhold 0``; the simulator's seed) and k, keep-most runs with a seed and gives the
protected release P. The attacker sees P and the counts keep-most prints (disclosures withheld, records withheld at
every location) and knows keep-most. ``tests/minimality_oracle.py`` enumerates every original P could have been cut
from, keeps those that keep-most turns into P under one of ``--seeds`` tie-breaks (fewer than all: the simulated
attacker rules out more originals than a real one could, so its candidate counts are never larger), and counts each
record's and person's candidates over the survivors' unions of all maximum matchings (brute force, not the audit
under test).

Printed per k: releases, originals enumerated, originals surviving, how often the true original survived, and the
records and people below k for the certificate's attacker (P alone), for the method-aware attacker, and for a
stronger one who also knows the withheld disclosures per location (keep-most does not print them); then the
smallest release where each of the two narrows something below k, if any.  Also how often keep-most
leaves P as it is: then P is one of its own originals, so an attacker who has P without the summary (and must allow
every count) keeps every candidate the certificate counts.

    python benchmarks/minimality_attack.py                          # 30 releases, k = 2 3 (minutes)
    python benchmarks/minimality_attack.py --releases 10 --first 30  # the next ten
    python benchmarks/minimality_attack.py --withhold 0              # originals that withhold nothing
    python benchmarks/minimality_attack.py --k 3 --max-originals 60  # skip the releases with many originals
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))       # tests.minimality_oracle: the brute force


def small_release(index: int, withhold: float = 0.3) -> Any:
    """Release ``index`` of the study: 5 or 6 subjects, 3 or 4 locations, visit probability 0.5, a share
    ``withhold`` of the de-identified records withheld, simulator seed ``index``."""
    from graphlink.simulation.simulate import simulate_uniform

    subjects, locations = (5, 3) if index % 3 == 0 else (6, 3) if index % 3 == 1 else (5, 4)
    return simulate_uniform(subjects, locations, 0.5, withhold=withhold, seed=index)


def describe(frame: Any) -> str:
    """A release as one line per location: the people, then the records."""
    lines = []
    for c, part in frame.groupby("location", sort=False):
        ident = " ".join(part.loc[part["kind"] == "identified", "element"])
        deid = " ".join(part.loc[part["kind"] == "deidentified", "element"])
        lines.append(f"      {c}: people {ident or '-'} | records {deid or '-'}")
    return "\n".join(lines)


def _shown(partners: dict, frame: Any) -> list[tuple[str, str]]:
    """The de-identified disclosures of the protected release, as (location, record)."""
    part = frame[frame["kind"] == "deidentified"]
    return [(str(c), str(r)) for c, r in zip(part["location"], part["element"], strict=True) if r in partners]


def main() -> None:
    from graphlink.errors import ReleaseError
    from graphlink.protect.pipeline import unlink_keep
    from tests.minimality_oracle import Published, attack, originals, published, reaches

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", type=int, default=30)
    ap.add_argument("--first", type=int, default=0, help="simulator seed of the first release")
    ap.add_argument("--k", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--seeds", type=int, default=8, help="keep-most tie-break seeds tried per original")
    ap.add_argument("--withhold", type=float, default=0.3,
                    help="share of de-identified records the original releases withhold (0: every location discloses "
                         "a record of everyone who visited it)")
    ap.add_argument("--max-originals", type=int, default=None,
                    help="skip a release with more originals than this (counted as skipped; the slow cases)")
    args = ap.parse_args()
    seeds = range(args.seeds)
    t0 = time.perf_counter()
    for k in args.k:
        tally = dict.fromkeys(("releases", "refused", "skipped", "withheld", "originals", "surviving", "truth", "fixed",
                               "records", "people", "plain_records", "plain_people", "aware_records",
                               "aware_people", "located_records", "located_people"), 0)
        worst: dict[str, tuple[int, int, Any, Any, Any]] = {}
        for index in range(args.first, args.first + args.releases):
            rel = small_release(index, args.withhold)
            try:
                res = unlink_keep(rel, k, 0, side="deidentified", audit_before=False, multiplicity="one-to-one")
            except ReleaseError:
                tally["refused"] += 1
                continue
            view = published(rel.frame, res.release.frame, per_location=True)
            totals = Published(view.frame, view.withheld, view.whole)       # what the attack enumerates
            if args.max_originals is not None and sum(1 for _ in originals(totals)) > args.max_originals:
                tally["skipped"] += 1
                continue
            found = attack(view, k, seeds, truth=rel.frame)
            tally["releases"] += 1
            print(f"  k = {k}, release {index}: {found.originals} originals, {len(found.surviving)} surviving "
                  f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
            tally["withheld"] += view.withheld > 0
            tally["originals"] += found.originals
            tally["surviving"] += len(found.surviving)
            tally["truth"] += bool(found.truth)
            # keep-most leaves P as it is: then P is an original of its own, and an attacker without the summary
            # (who must allow every count) keeps at least the certificate's candidates
            tally["fixed"] += reaches(res.release.frame, res.release.frame, k, seeds) is not None
            tally["records"] += len(found.plain.records)
            tally["people"] += sum(1 for n in found.plain.people.values() if n)
            for name, cands in (("plain", found.plain), ("aware", found.aware), ("located", found.aware_located)):
                tally[f"{name}_records"] += len(cands.below_records)
                tally[f"{name}_people"] += len(cands.below_people)
            for name, cands in (("aware", found.aware), ("located", found.aware_located)):
                short = len(cands.below_records) + len(cands.below_people)
                if short and (name not in worst or len(rel.frame) < worst[name][0]):
                    worst[name] = (len(rel.frame), index, rel.frame, found, view)
        skipped = (f"{tally['skipped']} skipped for more than {args.max_originals} originals, "
                   if args.max_originals is not None else "")
        print(f"k = {k}: {tally['releases']} releases ({tally['refused']} refused, {skipped}{tally['withheld']} with "
              f"something withheld), {tally['originals']} originals enumerated, {tally['surviving']} surviving, "
              f"true original among them {tally['truth']} of {tally['releases']}; keep-most leaves P as it is "
              f"{tally['fixed']} of {tally['releases']}", flush=True)
        print(f"  records {tally['records']}, people some record can be {tally['people']}; below k: certificate's "
              f"attacker {tally['plain_records']} records / {tally['plain_people']} people, method-aware "
              f"{tally['aware_records']} / {tally['aware_people']}, with the per-location counts "
              f"{tally['located_records']} / {tally['located_people']}", flush=True)
        for name, (_, index, frame, found, view) in worst.items():
            cands = found.aware if name == "aware" else found.aware_located
            who = "method-aware attacker" if name == "aware" else "attacker who also knows the per-location counts"
            print(f"  smallest release the {who} narrows below k: simulator seed {index}, {view.withheld} "
                  f"disclosures withheld, {view.whole} of the records at every location; {len(found.surviving)} of "
                  f"{found.originals} originals survive ({found.located} with the per-location counts); the original:")
            print(describe(frame))
            print("    records the protected release discloses: "
                  + " ".join(f"{r}@{c}" for c, r in sorted(_shown(found.plain.partners, view.frame))))
            for r in cands.below_records:
                print(f"      record {r}: certificate {sorted(found.plain.partners[r])}, this attacker "
                      f"{sorted(cands.partners[r])}")
            for m in cands.below_people:
                print(f"      person {m}: certificate {found.plain.people[m]} candidates, this attacker "
                      f"{cands.people[m]}")
    print(f"{time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
