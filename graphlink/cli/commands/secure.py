"""``graphlink secure-demo`` — run STRANON (thesis Alg. 11) with every party in its own process over
loopback TCP and print what each party saw, what it disclosed, the integrity checks and the costs
(App. C.3.2 formulas next to the measured counters)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from graphlink import registry
from graphlink.errors import ReleaseError

THESIS_FIG_8_1 = {
    "H1": (["Ali", "Bob", "Charlie"], ["actg", "tgac"]),
    "H2": (["Ali", "Bob", "Dan"], ["actg", "ctga", "gatc"]),
    "H3": (["Ali", "Charlie", "Dan"], ["actg", "tgac", "gatc"]),
    "H4": (["Bob", "Charlie", "Dan"], ["ctga", "tgac"]),
}
THESIS_TRUTH = {"Ali": "actg", "Bob": "ctga", "Charlie": "tgac", "Dan": "gatc"}
ADVERSARIES = ("full-switch", "partial-switch", "refuse-decrypt", "grab-and-go")


def _parse_adversary(spec: str):
    """``KIND:CHEATER:VICTIM[:F]`` e.g. ``partial-switch:L02:L01:1``."""
    from graphlink.secure.parties import Behaviour

    parts = spec.split(":")
    if len(parts) not in (3, 4) or parts[0] not in ADVERSARIES:
        raise ReleaseError(f"--adversary must be KIND:CHEATER:VICTIM[:F] with KIND in {', '.join(ADVERSARIES)}")
    return parts[1], Behaviour(parts[0], victim=parts[2], f=int(parts[3]) if len(parts) == 4 else 1)


def secure_demo(
    locations: int = typer.Option(4, "--locations", min=2, help="Number of simulated locations."),
    subjects: int = typer.Option(60, "--subjects", min=1, help="Simulated subjects."),
    p: float = typer.Option(0.5, "--p", help="Visit probability per location."),
    withhold: float = typer.Option(0.3, "--withhold", help="Probability a visited location withholds ω."),
    release_path: Path = typer.Option(None, "--release", help="Use this release instead of simulating."),
    thesis: bool = typer.Option(False, "--thesis-example", help="Use the four hospitals of Figure 8.1."),
    k: int = typer.Option(2, "--k", min=1),
    method: str = typer.Option("greedy-dedup", "--method", help="greedy-dedup | force-dedup"),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the simulated release only; the protocol's "
                             "randomness always comes from the OS CSPRNG."),
    alpha: int = typer.Option(1, "--alpha", min=0, help="Decryption-check rounds per location (Thm 12)."),
    beta: int = typer.Option(2, "--beta", min=0, help="Own dummy values per location (Thm 12)."),
    dc_size: int = typer.Option(8, "--dc", min=0, help="|D_C| lock dummies (Thm 13)."),
    no_lock: bool = typer.Option(False, "--no-lock", help="Recollection keys instead of the lock."),
    no_integrity: bool = typer.Option(False, "--no-integrity", help="Basic SCAMD: no v_C, β, α."),
    adversary: list[str] = typer.Option([], "--adversary", help="KIND:CHEATER:VICTIM[:F] (repeatable)."),
    in_process: bool = typer.Option(False, "--in-process", help="Parties as objects in one process."),
    no_veto: bool = typer.Option(False, "--no-veto", help="Skip the contributor veto round."),
    fmt: str = typer.Option("table", "--format", help="table | json"),
) -> None:
    """Run the secure protocol among separate processes on 127.0.0.1 and show every party's view."""
    from graphlink.secure.api import evaluate_views, private_pairs, release_sets
    from graphlink.secure.protocol import bandwidth_formula, dataset_ops_formula, run_stranon

    base = method.removesuffix("-secure")
    if base not in registry.secure_names():
        raise ReleaseError(f"--method must be {' or '.join(registry.secure_names())}, got {method!r}")
    release = None
    if thesis:
        data = {c: (list(g), list(o)) for c, (g, o) in THESIS_FIG_8_1.items()}
        pairs = {c: {m: THESIS_TRUTH[m] for m in g if THESIS_TRUTH[m] in o} for c, (g, o) in data.items()}
    else:
        if release_path is not None:
            from graphlink.core.release import read_release

            release = read_release(release_path)
        else:
            from graphlink.simulation.simulate import simulate_uniform

            release = simulate_uniform(subjects, locations, p, withhold=withhold, seed=seed)
        locs, gamma, omega = release_sets(release)
        data = {c: (gamma[c], omega[c]) for c in locs}
        pairs = private_pairs(release, gamma, omega)
    behaviours = dict(_parse_adversary(a) for a in adversary)
    integrity = not no_integrity
    locking = not no_lock
    res = run_stranon(data, k, f"{base}-secure", alpha=alpha, beta=beta, integrity=integrity,
                      locking=locking, dc_size=dc_size if locking else 0, behaviours=behaviours,
                      processes=not in_process, pairs=pairs, contributor_veto=not no_veto and pairs is not None)
    locs = list(data)
    L = len(locs)
    parties = []
    for name in [*locs, "sTTP"]:
        seen: dict[str, dict] = {}
        for s in res.seen[name]:
            key = f"{s['kind']} from {s['from']}"
            e = seen.setdefault(key, {"messages": 0, "records": 0, "bytes": 0})
            e["messages"] += 1
            e["records"] += s["records"]
            e["bytes"] += s["bytes"]
        row = {"party": name, "saw": seen, "costs": res.costs[name]}
        if name != "sTTP":
            n_ret = len(res.dedup.returns[name]) if res.dedup else 0
            row["disclosed"] = len(res.disclosed[name])
            row["formula_dataset_ops"] = dataset_ops_formula(L, alpha if integrity else 0)
            row["bandwidth_records"] = res.bandwidth_by_owner.get(name, 0)
            row["formula_bandwidth_records"] = bandwidth_formula(
                L, len(data[name][1]), n_ret, alpha=alpha if integrity else 0, beta=beta if integrity else 0,
                integrity=integrity, dc_size=dc_size if locking else 0, locking=locking,
                submitted_dummies=False)
        parties.append(row)
    g = {c: data[c][0] for c in locs}
    o = {c: data[c][1] for c in locs}
    views = evaluate_views(locs, g, o, res.disclosed, k, release) if not res.aborted else {}
    if thesis and views.get("checked"):
        from graphlink.secure.unlinkability import contributor_view

        gs = {c: set(v) for c, v in g.items()}
        ds = {c: set(v) for c, v in res.disclosed.items()}
        views["contributor"] = {c: contributor_view(locs, gs, ds, k, pairs[c]).to_dict() for c in locs}
        views["contributor_all_k_unlinkable"] = all(v["k_unlinkable"] for v in views["contributor"].values())
    summary = {"transport": "in-process" if in_process else "separate processes over 127.0.0.1 TCP",
               "ports": getattr(res, "ports", None), "k": k, "method": f"{base}-secure",
               "aborted": res.aborted, "detections": res.detections, "certification": res.certification,
               "wall_seconds": round(res.wall_seconds, 3), "parties": parties, "views": views,
               "contributor_veto_rounds": res.veto_rounds,
               "trace": res.dedup.trace if res.dedup else []}
    if fmt == "json":
        typer.echo(json.dumps(summary, indent=2, default=str))
        return
    _print(summary)


def register(app: typer.Typer) -> None:
    app.command("secure-demo")(secure_demo)


def _print(summary: dict) -> None:
    """Rich tables of the run.  Location names come from the user's release: they are escaped, so a name
    like ``[/b]`` prints as itself instead of being read as (broken) rich markup."""
    from rich.console import Console
    from rich.table import Table

    from graphlink.display import cell
    from graphlink.display import markup_text as escape

    con = Console()
    con.print(f"[bold]STRANON[/bold] {summary['method']}, k={summary['k']} — {summary['transport']}"
              + (f" (ports {summary['ports']})" if summary["ports"] else ""))
    for p in summary["parties"]:
        t = Table(title=cell(f"{p['party']} received"), show_header=True)
        for col in ("message", "count", "records (32-byte points)", "bytes"):
            t.add_column(col)
        for key, e in p["saw"].items():
            t.add_row(cell(key), str(e["messages"]), str(e["records"]), str(e["bytes"]))
        con.print(t)
    t = Table(title="costs (App. C.3.2)", show_header=True)
    for col in ("party", "enc/dec", "formula", "mults", "hashes", "sent B", "recv B", "bw rec", "bw formula",
                "disclosed"):
        t.add_column(col)
    for p in summary["parties"]:
        c = p["costs"]
        t.add_row(cell(p["party"]), str(c["dataset_ops"]), str(p.get("formula_dataset_ops", "-")),
                  str(c["element_ops"]), str(c["hash_ops"]), str(c["bytes_sent"]), str(c["bytes_received"]),
                  str(p.get("bandwidth_records", "-")), str(p.get("formula_bandwidth_records", "-")),
                  str(p.get("disclosed", "-")))
    con.print(t)
    if summary["aborted"]:
        con.print(f"[red]aborted:[/red] {escape(str(summary['aborted']))}")
    for d in summary["detections"]:
        con.print(f"[yellow]detected:[/yellow] {escape(str(d))}")
    cert = summary["certification"]
    if cert:
        con.print(f"sTTP certification on ciphertexts: {escape(str(cert))}")
    v = summary["views"]
    if v.get("checked"):
        con.print(f"external k-unlinkable: {v['external']['k_unlinkable']}")
        if "contributor" in v:
            con.print(f"contributor k-unlinkable for every location: {v['contributor_all_k_unlinkable']}")
    for r, v in enumerate(summary["contributor_veto_rounds"]):
        con.print(f"contributor veto round {r + 1}: objections {escape(str(v['objections'] or 'none'))}")
    con.print(f"wall time: {summary['wall_seconds']} s")
