"""``irbandits reproduce ...``: published results re-computed from the shared data, one command each."""

from __future__ import annotations

from pathlib import Path

import typer

from irbandits.cli_judge import judging_replay, judging_study

reproduce = typer.Typer(no_args_is_help=True, help="Reproduce published results from ../shared/data.")
reproduce.command("judging-study")(judging_study)
reproduce.command("judging-replay")(judging_replay)


@reproduce.command("best-item-study")
def best_item_study(
    data: Path = typer.Option(Path("../shared/data"), help="the shared data directory"),
    samples: int = typer.Option(1000, min=10, help="topic-bootstrap samples per tau interval"),
    draws: int = typer.Option(1000, min=10, help="random sparse-label draws"),
    seed: int = typer.Option(0, help="seed of the bootstrap and the draws"),
    figures: Path = typer.Option(Path("docs/figures"), help="where the figures go"),
    doc: Path = typer.Option(Path("REPRODUCTION.md"), help="the document whose best-item section is (re)written"),
) -> None:
    """Thesis ch. 5.4: tau of nDCG@10 and best-item MRR against PGC, and the random-label baseline."""
    from irbandits.best_item_study import run_study, write_report
    from irbandits.cli import _table, console

    study = run_study(data, samples=samples, draws=draws, seed=seed)
    comp = study["comparisons"]
    console.print(_table(comp, "Kendall's tau (topic-bootstrap 95 % interval) and tau-ap"))
    base = study["baseline"]["tau"]
    console.print(f"random sparse labels: 95 % of {draws} draws give tau in "
                  f"[{base.quantile(0.025):.3f}, {base.quantile(0.975):.3f}] (published 0.485-0.735)")
    s = study["seconds"]
    console.print(f"read {s['read']:.1f} s, evaluate 63 runs x 4 measures {s['evaluate']:.1f} s, "
                  f"compare {s['compare']:.1f} s")
    console.print(f"wrote {write_report(study, figures, doc)}")
