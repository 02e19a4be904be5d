"""``graphlink simulate`` (synthetic releases, thesis §5.4/§5.6/Appendix A) and ``graphlink experiment`` (the
thesis's simulation experiments, ch. 5 and 9). Thin: parse, call :mod:`graphlink.simulation.simulate` /
:mod:`graphlink.simulation.experiments`, print."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from graphlink.cli.options import SimReserved
from graphlink.display import markup_text
from graphlink.errors import ReleaseError, require

err = Console(stderr=True)


def _floats(text: str | None, what: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise ReleaseError(f"{what}: expected comma-separated numbers, got {text!r}") from exc


def simulate_cmd(
    out: Annotated[Path, typer.Option("--out", help="Release file to write (CSV; .parquet for Parquet)")],
    subjects: Annotated[int | None, typer.Option("--subjects", help="Number of subjects (or households with "
                                                 "--households)")] = None,
    locations: Annotated[int | None, typer.Option("--locations", help="Number of locations |C|")] = None,
    p: Annotated[float | None, typer.Option("--p", help="Uniform visit probability")] = None,
    zipf: Annotated[float | None, typer.Option("--zipf", help="Zipf skew alpha (rank r visited with "
                                               "probability r^-alpha)")] = None,
    probabilities: Annotated[Path | None, typer.Option(
        "--probabilities", help="CSV of location popularities: location, p|probability|visitors "
        "[, withhold|purchasers]")] = None,
    population: Annotated[int | None, typer.Option("--population", help="Population size dividing the "
                                                   "'visitors' column of --probabilities")] = None,
    repeat: Annotated[int, typer.Option("--repeat", help="Concatenate W copies of the location profile "
                                        "(§5.4: 24/48/72 sites)")] = 1,
    withhold: Annotated[float, typer.Option("--withhold", help="Probability that the reserved side withholds "
                                            "each released record")] = 0.0,
    withhold_rates: Annotated[str | None, typer.Option(
        "--withhold-rates", help="Comma-separated per-location withholding rates (overrides --withhold)")] = None,
    reserved: Annotated[SimReserved | None, typer.Option(
        "--reserved", help="Side that withholds (default: deidentified; identified with --households)")] = None,
    households: Annotated[bool, typer.Option("--households", help="One-to-many: households of several "
                                             "identified members sharing one de-identified element")] = False,
    household_sizes: Annotated[str, typer.Option(
        "--household-sizes", help="Relative frequency of household sizes 1, 2, ...; without --subjects they "
        "are exact counts (Homenet: 56,9,14,5,1,1)")] = "56,9,14,5,1,1",
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed (same seed, same files)")] = None,
    truth: Annotated[Path | None, typer.Option("--truth", help="Write the truth pairs (identified, "
                                               "deidentified) to this CSV")] = None,
) -> None:
    """Write a synthetic release (and its truth): uniform, Zipf or explicit per-location visits, withholding,
    and optional households. Deterministic for a seed."""
    import numpy as np

    from graphlink.fileio import check_output
    from graphlink.simulation import simulate as sim

    check_output(out, inputs=[probabilities])
    if truth is not None:
        check_output(truth, inputs=[probabilities, out], option="--truth")
    chosen = [x is not None for x in (p, zipf, probabilities)]
    if sum(chosen) != 1:
        raise ReleaseError("give exactly one of --p, --zipf, --probabilities")
    if repeat < 1:
        raise ReleaseError("--repeat must be at least 1")
    sim.check_seed(seed)
    if population is not None and probabilities is None:
        raise ReleaseError("--population only applies with --probabilities (a 'visitors' column)")
    names = None
    csv_rates = None
    if probabilities is not None:
        prof = sim.read_popularities(probabilities, population)
        probs = prof["p"].to_numpy()
        names = prof["location"].tolist()
        if prof["withhold"].notna().any():
            csv_rates = prof["withhold"].fillna(withhold).to_numpy()
    else:
        if locations is None:
            raise ReleaseError("--locations is required with --p or --zipf")
        if locations < 1:
            raise ReleaseError(f"--locations must be at least 1, got {locations}")
        sim.check_size(1, locations)
        probs = (sim.zipf_probabilities(locations, zipf) if zipf is not None
                 else np.full(locations, float(p)))  # validated by the generator
    rates: float | np.ndarray = withhold
    if csv_rates is not None:
        rates = csv_rates
    listed = _floats(withhold_rates, "--withhold-rates")
    if listed is not None:
        if len(listed) != len(probs):
            raise ReleaseError(f"--withhold-rates has {len(listed)} values for {len(probs)} locations")
        rates = np.asarray(listed)
    if repeat > 1:
        sim.check_size(1, len(probs) * repeat)
        probs = np.tile(probs, repeat)
        rates = np.tile(rates, repeat) if np.ndim(rates) else rates
        names = None if names is None else [f"{n}#{w + 1}" for w in range(repeat) for n in names]
    side = reserved.value if reserved is not None else ("identified" if households else "deidentified")
    if households:
        weights = _floats(household_sizes, "--household-sizes") or []
        pop = sim.household_population(subjects, probs, size_weights=weights, withhold=rates, reserved=side,
                                       seed=seed)
        if names is not None:
            from dataclasses import replace

            pop = replace(pop, locations=names)
    else:
        if subjects is None:
            raise ReleaseError("--subjects is required (without --households)")
        pop = sim.draw_population(subjects, probs, withhold=rates, reserved=side, seed=seed, locations=names)
    frame = pop.frame()
    if frame.empty:
        raise ReleaseError("the simulated population released nothing (every visit probability is 0?); "
                           "nothing written")
    pop.write(out, truth)
    n_id = int((frame["kind"] == "identified").sum())
    err.print(f"wrote {markup_text(out)}: {len(frame):,} rows ({n_id:,} identified, {len(frame) - n_id:,} "
              f"de-identified records) over {len(pop.locations)} locations; {pop.n_identified:,} identified subjects, "
              f"{pop.n_deidentified:,} de-identified elements; reserved side: {side}"
              + (f"; truth: {markup_text(truth)}" if truth else ""))
    if side == "identified" and pop.one_to_one:
        # identified withholding fits one-to-many data too; the analyses read it that way unless told
        err.print("this is one-to-one data: analyse it with --multiplicity one-to-one (without it, identified "
                  "withholding is read one-to-many, whose certain pairs hold under both readings)")


def experiment_cmd(
    name: Annotated[str | None, typer.Argument(help="Experiment name (see --list)")] = None,
    runs: Annotated[int | None, typer.Option("--runs", help="Populations per point (default: the thesis's "
                                             "setting, or a few with --small)")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Output folder for the CSV and PNG")] = Path("experiments"),
    small: Annotated[bool, typer.Option("--small", help="Small, quick settings")] = False,
    workers: Annotated[int | None, typer.Option("--workers", help="Worker processes (default: 2)")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the experiments and exit")] = False,
) -> None:
    """Run one of the thesis's simulation experiments: writes a tidy CSV and a PNG and prints the comparison
    with the thesis's stated numbers."""
    from graphlink.simulation.experiments.registry import load_all

    exps = load_all()
    if list_ or name is None:
        for n in sorted(exps):
            typer.echo(f"{n:20s} {exps[n].description}")
        if name is None and not list_:
            raise typer.Exit(0)
        return
    if name not in exps:
        raise ReleaseError(f"unknown experiment {name!r}; choose from {', '.join(sorted(exps))}")
    if runs is not None and runs < 1:
        raise ReleaseError("--runs must be at least 1")
    if seed < 0:
        raise ReleaseError(f"--seed must be a non-negative integer, got {seed}")
    if workers is not None and workers < 1:
        raise ReleaseError(f"--workers must be at least 1, got {workers}")
    blocker = next((p for p in (out, *out.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise ReleaseError(f"--out must be a folder, but {blocker} is a file")
    require("matplotlib", "plot", "graphlink experiment (its PNG figures)")   # before the runs, not after
    kwargs = {"runs": runs, "seed": seed, "out": out, "small": small}
    if workers is not None:
        kwargs["workers"] = workers
    result = exps[name].run(**kwargs)
    typer.echo(str(result))


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_cmd)
    app.command("experiment")(experiment_cmd)
