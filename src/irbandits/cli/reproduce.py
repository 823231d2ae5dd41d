"""``irbandits reproduce ...``: published results re-computed from the shared data, one command per
study of :data:`irbandits.studies.STUDIES` (its name and one-line description)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import (
    ADDRESS,
    BACKEND,
    JOBS,
    check_dir,
    check_file,
    check_output,
    check_table_output,
    console,
    make_table,
    parse_count,
    worker_count,
    write_table,
)
from irbandits.studies import STUDIES, get_study, list_studies
from irbandits.studies.claims import (
    AGREES,
    COLUMNS,
    DISAGREES,
    NOT_CHECKED,
    NOT_RUN,
    Claim,
    collect,
    counts,
    fill_doc,
    write_claims,
)
from irbandits.studies.claims import markdown as to_markdown
from irbandits.tasks import check_backend

app = typer.Typer(help="Reproduce published results from ../shared/data; without NAME, list the studies.")


@app.callback(invoke_without_command=True)
def studies(
    ctx: typer.Context,
    summary: bool = typer.Option(False, "--summary", help="print every study's claims and verdicts from the "
                                 "claims.csv files under --out instead of listing the studies"),
    out: Path = typer.Option(Path("."), help="with --summary: where the studies' output folders are (each "
                             "claims.csv down to two levels below; default: here, where the studies write)"),
    markdown: bool = typer.Option(False, "--markdown", help="with --summary: also print each study's claims "
                                  "as the markdown table of its REPRODUCTION.md section"),
    update_doc: Optional[Path] = typer.Option(None, "--update-doc", help="with --summary: write each study's "
                                              "claims table into this document between its "
                                              "'<!-- NAME:claims:begin/end -->' lines"),
) -> None:
    """List the studies when no NAME is given; with --summary, their claims."""
    if ctx.invoked_subcommand is not None:
        return
    if not summary:
        console.print(make_table(list_studies(), "studies (irbandits reproduce NAME --help for the options)"))
        return
    check_dir(out, "--out")
    table, files = collect(out, list(STUDIES))
    console.print(make_table(table[["study", "claim", "verdict", "scale"]],
                             f"claims of every study, from the claims.csv files under {out}"))
    n = counts(table)
    run = table[table.verdict != NOT_RUN].study.nunique()
    console.print(f"{n[AGREES]} agree, {n[DISAGREES]} disagree, {n[NOT_CHECKED]} not checked; {run} of "
                  f"{table.study.nunique()} studies run, {n[NOT_RUN]} not run", markup=False)
    for name, path in files.items():
        console.print(f"{name}: {path}", markup=False)
    rows = [Claim(*r) for r in table[table.verdict != NOT_RUN][list(COLUMNS)].itertuples(index=False)]
    if markdown:
        for name in dict.fromkeys(r.study for r in rows):
            part = [r for r in rows if r.study == name]
            console.print(f"\n{name} ({part[0].paper}; {part[0].scale})\n\n{to_markdown(part)}", markup=False,
                          soft_wrap=True)
    if update_doc is not None:
        check_file(update_doc, "--update-doc")
        update_doc.write_text(fill_doc(update_doc.read_text(), rows))
        console.print(f"wrote the claims tables of {len({r.study for r in rows})} studies into {update_doc}",
                      markup=False)


def _publish(rows: list[Claim], source: str, out: Path, *written: Path) -> None:
    """Print a study's claims as markdown, write ``out/claims.csv`` and name it after the files ``written``."""
    console.print(to_markdown(rows, source), markup=False, soft_wrap=True)
    names = [str(p) for p in (*written, write_claims(rows, out))]
    console.print(f"wrote {', '.join(names[:-1])} and {names[-1]}", markup=False)


def _report(name: str, result: dict, out: Path, evaluated: str) -> None:
    """A measures study's timings, then its report ``out/NAME.md`` with its figures and ``out/claims.csv``."""
    s, module = result["seconds"], get_study(name).load()
    console.print(f"read {s['read']:.1f} s, {evaluated} {s['evaluate']:.1f} s, compare {s['compare']:.1f} s",
                  markup=False)
    out.mkdir(exist_ok=True)
    console.print(f"wrote {module.write_report(result, out, out / f'{name}.md')} and its figures", markup=False)
    console.print(f"wrote {write_claims(module.claim_rows(result), out)}", markup=False)


def _study(name: str):
    """Register a command under the study's registered name and description."""
    return app.command(name, help=STUDIES[name].description)


@_study("best-item-study")
def best_item_study(
    data: Path = typer.Option(Path("../shared/data"), help="the shared data directory"),
    samples: int = typer.Option(1000, min=10, help="topic-bootstrap samples per tau interval"),
    draws: int = typer.Option(1000, min=10, help="random sparse-label draws"),
    seed: int = typer.Option(0, help="seed of the bootstrap and the draws"),
    out: Path = typer.Option(Path("best-item-study"), help="output directory: the report best-item-study.md "
                             "and its figures"),
) -> None:
    study = get_study("best-item-study")
    check_dir(data, "--data")
    check_output(out, "--out", directory=True)
    result = study.run(data=data, samples=samples, draws=draws, seed=seed)
    comp = result["comparisons"]
    console.print(make_table(comp, "Kendall's tau (topic-bootstrap 95 % interval) and tau-ap"))
    base = result["baseline"]["tau"]
    console.print(f"random sparse labels: 95 % of {draws} draws give tau in "
                  f"[{base.quantile(0.025):.3f}, {base.quantile(0.975):.3f}] (published 0.485-0.735)")
    _report("best-item-study", result, out, "evaluate 63 runs x 4 measures")


@_study("judging-study")
def judging_study(
    runs: int = typer.Option(1000, min=1, help="runs per algorithm and case"),
    seed: int = typer.Option(0, help="master seed; per-run seeds derive from it"),
    budget: int = typer.Option(1000, min=1, help="judgments per run for the budgeted algorithms"),
    algorithm: Optional[list[str]] = typer.Option(None, "--algorithm", "-a", help="repeat; default all"),
    jobs: int = JOBS,
    backend: str = BACKEND,
    address: Optional[str] = ADDRESS,
    out: Optional[Path] = typer.Option(None, help="also write every run: .csv, .tsv, .parquet or .json"),
    claims: Path = typer.Option(Path("reproduce-judging-study"), help="output folder: claims.csv and the figure "
                                "judging-study.png"),
) -> None:
    module = get_study("judging-study").load()
    if out is not None:
        check_table_output(out, "--out")
    check_output(claims, "--claims", directory=True)
    check_backend(backend, worker_count(jobs), address)
    df = module.run_study(algorithm, runs=runs, seed=seed, budget=budget, jobs=worker_count(jobs),
                          progress=sys.stderr.isatty(), backend=backend, address=address)
    if out is not None:
        write_table(df.assign(best=df.best.map(lambda b: " ".join(map(str, b)))), out)
    summary = module.summarize(df)
    console.print(make_table(module.figure_4_1(summary), f"Figure 4.1 reproduced: ours ({runs} runs per row) and, "
                             "in brackets, published (1,000 runs)"))
    claims.mkdir(parents=True, exist_ok=True)
    _publish(module.claim_rows(summary), "thesis (chapter 4)", claims, module.plot(summary, claims / "judging-study.png"))


@_study("judging-replay")
def judging_replay(
    data: Path = typer.Option(Path("../shared/data/human-preferences-dl21"), help="released data folder"),
    qrels: Optional[Path] = typer.Option(None, help="build pools from these graded qrels instead of the "
                                                    "items the recorded judgments name"),
    runs: int = typer.Option(100, min=1, help="replays"),
    seed: int = typer.Option(0, help="master seed"),
    claims: Path = typer.Option(Path("reproduce-judging-replay"), help="output folder: claims.csv and the "
                                "figure judging-replay-sets.png"),
) -> None:
    check_dir(data, "--data")
    check_output(claims, "--claims", directory=True)
    module = get_study("judging-replay").load()
    result = module.run_study(data=data, qrels=qrels and check_file(qrels, "--qrels"), runs=runs, seed=seed)
    console.print(make_table(result["sets"], "the released best sets (thesis 5.3); recomputed = topics where "
                             "scoring the set's final phases in the judgments gives the released set"))
    console.print(make_table(result["agreement"], "two released sets: topics sharing a best passage, passages "
                             "in both"))
    console.print(make_table(result["replay"], f"{runs} replays on {result['replay_pools']} pools: share = topics "
                             "whose replayed best set shares an item with the released one; same = identical sets"))
    claims.mkdir(parents=True, exist_ok=True)
    _publish(module.claim_rows(result), "thesis (sections 5.1, 5.3)", claims,
             module.plot(result, claims / "judging-replay-sets.png"))


@_study("hybrid-assessors")
def hybrid_assessors(
    data: Path = typer.Option(Path("../shared/data/human-preferences-dl21"), help="released data folder"),
    full: bool = typer.Option(False, "--full", help="100 replays per judge (default: 10, about a minute)"),
    runs: Optional[int] = typer.Option(None, min=1, help="replays per judge (overrides the scale's)"),
    seed: int = typer.Option(0, help="master seed"),
    unsure: float = typer.Option(0.0, help="the share of pairs the judges are unsure of"),
    audit: float = typer.Option(0.1, help="the share of the judges' sure answers audited by people"),
    threshold: float = typer.Option(0.7, help="cut a judge off once its audited agreement's 99 % interval is "
                                    "below this"),
    out: Path = typer.Option(Path("reproduce-hybrid-assessors"), help="output folder: runs.csv, table.csv, the "
                             "figure hybrid-assessors.png and claims.csv"),
) -> None:
    check_dir(data, "--data")
    check_output(out, "--out", directory=True)
    module = get_study("hybrid-assessors").load()
    runs = runs or (module.FULL if full else module.QUICK)
    df = module.run_study(data=data, runs=runs, seed=seed, unsure=unsure, audit=audit, threshold=threshold)
    table = module.table(df)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "runs.csv", index=False)
    table.to_csv(out / "table.csv", index=False)
    console.print(make_table(table, f"{runs} replays per judge (first row: all human); saved = people's "
                             "judgments saved, share = topics sharing a best item with Combined I+II"))
    _publish(module.claim_rows(table, df.attrs), "issue 25 (beyond the seeds)", out, out / "runs.csv",
             out / "table.csv", module.plot(table, out / "hybrid-assessors.png"))


@_study("pruning-survival")
def pruning_survival(
    pools: int = typer.Option(400, min=10, help="pools of 12 items per (n, b) point"),
    seed: int = typer.Option(0, help="master seed"),
    out: Path = typer.Option(Path("reproduce-pruning-survival"), help="output directory: table.csv, the figure "
                             "and claims.csv"),
) -> None:
    check_output(out, "--out", directory=True)
    module = get_study("pruning-survival").load()
    table = module.run_study(pools=pools, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "table.csv", index=False)
    console.print(make_table(table[table.n == 7], f"n = 7: the formula and the top-k process ({pools} pools each)"))
    _publish(module.claim_rows(table), "thesis (section 3.3.4, Figure 3.1)", out, out / "table.csv",
             module.plot(table, out / "pruning-survival.png"))


@_study("winner-notions")
def winner_notions(
    samples: int = typer.Option(1000, min=1, help="random K-ranker subsets per K (the thesis: 10,000)"),
    seed: int = typer.Option(0, help="seed of the subsets"),
    matrix: Optional[list[str]] = typer.Option(None, "--matrix", help="a matrix name in --data or a matrix "
                                               "file (repeat); default mslr-navigational and mslr-perfect"),
    data: Path = typer.Option(Path("../shared/data/preference-matrices"), help="folder of the named matrices"),
    out: Path = typer.Option(Path("reproduce-winner-notions"), help="output directory: subsets.csv, the "
                             "figure and claims.csv"),
) -> None:
    check_dir(data, "--data")
    check_output(out, "--out", directory=True)
    module = get_study("winner-notions").load()
    for m in matrix or []:
        if Path(m).suffix:
            check_file(Path(m), "--matrix")
    table = module.run_study(samples=samples, seed=seed, matrices=matrix or module.MATRICES, data=data)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "subsets.csv", index=False)
    console.print(make_table(module.condorcet_share(table).reset_index(), "Figure 7.1: P_K, the share of "
                             f"K-subsets with a Condorcet winner ({samples} per K)"))
    console.print(make_table(module.overlap_table(table), "Table 7.1: percent of subsets whose winners overlap"))
    _publish(module.claim_rows(table), "thesis (section 7.1)", out, out / "subsets.csv",
             module.plot(table, out / "winner-notions.png"))


@_study("pooling-losada")
def pooling_losada(
    repetitions: int = typer.Option(100, min=1, help="seeded repetitions of each random method"),
    seed: int = typer.Option(0, help="master seed of the random methods"),
    depth: Optional[list[int]] = typer.Option(None, "--depth", help="pool depth (repeat); default 100 (the "
                                              "paper's) and 10 (the pool the qrels judge whole)"),
    topics: Optional[int] = typer.Option(None, min=1, help="only the first N judged topics (default all 53)"),
    relevant_grade: float = typer.Option(1, "--relevant-grade", help="the lowest qrels grade counted relevant"),
    judged_only: bool = typer.Option(False, "--judged-only", help="pool only the documents the qrels judge "
                                     "(each run condensed to them), so every pool is judged whole as in the "
                                     "paper; claims at a tenth of the paper's levels at depth 100"),
    runs_sample: Optional[int] = typer.Option(None, "--runs-sample", min=1, help="pool only N runs drawn at "
                                              "random (of one per team with --one-per-team)"),
    one_per_team: bool = typer.Option(False, "--one-per-team", help="pool one run per team drawn at random "
                                      "(teams by run name prefix: 17 of the 63 runs)"),
    runs_seed: int = typer.Option(0, "--runs-seed", help="seed of the runs drawn by --runs-sample and --one-per-team"),
    also: Optional[list[str]] = typer.Option(None, "--also", help="another method to simulate and tabulate (repeat; "
                                             "NAME or NAME:param=value, e.g. MM-NS:propagate=0); the claims use "
                                             "the study's methods only"),
    rank_runs: bool = typer.Option(False, "--rank-runs", help="also score the runs with each method's partial "
                                   "qrels after 25 / 50 / 100 judgments per topic (nDCG@10, AP) and compare their "
                                   "ranking with the full qrels' (Kendall tau, tau_AP, flips): ranking.csv; about "
                                   "ten minutes on two cores"),
    data: Path = typer.Option(Path("../shared/data/trec-dl-2021-passage"), help="folder of runs/ and qrels.txt"),
    out: Path = typer.Option(Path("reproduce-pooling-losada"), help="output directory: curves.csv, table-DEPTH.csv, "
                             "paired-DEPTH.csv, the figure and claims.csv"),
) -> None:
    from irbandits.pooling import method_specs

    check_dir(data, "--data")
    check_output(out, "--out", directory=True)
    module = get_study("pooling-losada").load()
    extra = [spec.label for spec in method_specs(also)] if also else []
    methods = module.METHODS + tuple(m for m in extra if m not in module.METHODS)
    result = module.run_study(depths=depth or module.DEPTHS, repetitions=repetitions, seed=seed, topics=topics,
                              methods=methods, relevant_grade=relevant_grade, judged_only=judged_only, data=data,
                              runs_sample=runs_sample, one_per_team=one_per_team, runs_seed=runs_seed,
                              rank_measures=module.RANK_MEASURES if rank_runs else ())
    out.mkdir(parents=True, exist_ok=True)
    result.curves.to_csv(out / "curves.csv", index=False)
    if result.ranking is not None:
        result.ranking.to_csv(out / "ranking.csv", index=False)
        for d in result.pools.depth:
            for m in module.RANK_MEASURES:
                console.print(make_table(module.tau_table(result, d, m).round(3).reset_index(),
                                         f"depth {d}, {m}: Kendall tau of the runs' ranking under partial qrels "
                                         f"against the pool's full qrels, by judgments per topic"))
    console.print(make_table(result.pools, "the pools (unjudged documents count as non-relevant)"))
    for d in result.pools.depth:
        t = module.table(result, d).round(2)
        t.to_csv(out / f"table-{d}.csv")
        console.print(make_table(t.reset_index(), f"depth {d}: mean relevant documents found after n judgments "
                                 f"({repetitions} repetitions of the random methods)"))
    for d in result.pools.depth:
        pairs = module.paired(result, d)
        pairs.to_csv(out / f"paired-{d}.csv", index=False)
        shown = pairs.drop(columns="depth").round(dict(mean_a=2, mean_b=2))
        shown["p"] = shown.p.map("{:.2g}".format)
        console.print(make_table(shown, f"depth {d}: paired Wilcoxon tests over topics (per-topic means)"))
    _publish(module.claim_rows(result), "paper (Losada et al., SAC 2016)", out, out / "curves.csv", out / "table-*.csv",
             out / "paired-*.csv", module.plot(result, out / "pooling-losada.png"))


@_study("preference-measures")
def preference_measures(
    data: Path = typer.Option(Path("../shared/data"), help="the shared data directory"),
    samples: int = typer.Option(1000, min=10, help="topic-bootstrap samples per tau interval"),
    k: int = typer.Option(10, min=1, help="cutoff rank of the preference measures"),
    seed: int = typer.Option(0, help="bootstrap seed"),
    out: Path = typer.Option(Path("preference-measures"), help="output directory: the report "
                             "preference-measures.md and its figures"),
) -> None:
    study = get_study("preference-measures")
    check_dir(data, "--data")
    check_output(out, "--out", directory=True)
    result = study.run(data=data, samples=samples, seed=seed, k=k)
    comp = result["comparisons"].assign(**{"95% CI": lambda c: [f"[{lo:.3f}, {hi:.3f}]" for lo, hi
                                                                 in zip(c.tau_low, c.tau_high)]})
    console.print(make_table(comp[["measure", "source", "reference", "topics", "tau", "95% CI", "tau_ap"]],
                             f"Kendall's tau over {result['runs']} runs, BCa interval from {samples} topic-bootstrap "
                             "samples"))
    ref = result["ndcg_pgc"]
    console.print(f"nDCG@10 vs PGC: tau = {ref['tau']:.4f} (published 0.8150)")
    _report("preference-measures", result, out, "evaluate")


def _online_study(name: str) -> None:
    """``irbandits reproduce NAME [--full]`` for an online study: runs it, prints its report and writes
    ``out/NAME.md`` with its figures."""

    @_study(name)
    def command(
        full: bool = typer.Option(False, "--full", help="the paper's horizon and runs (default: a small scale "
                                                        "that finishes in minutes)"),
        horizon: Optional[str] = typer.Option(None, help="steps per run (overrides the scale's)"),
        runs: Optional[int] = typer.Option(None, min=1, help="runs per algorithm (overrides the scale's)"),
        jobs: int = typer.Option(2, min=0, help="worker processes (0: all cores)"),
        seed: int = typer.Option(0, help="master seed"),
        out: Path = typer.Option(Path(f"reproduce-{name}"), help="results directory (resumable): runs, "
                                 f"{name}.md, claims.csv and the figures"),
        dry_run: bool = typer.Option(False, "--dry-run", help="run nothing: print the steps each algorithm would "
                                     "simulate and the core-hours they would take at the steps/s measured now"),
        probe_seconds: float = typer.Option(1.0, min=0.001, help="with --dry-run: seconds to time each "
                                            "algorithm's steps/s for"),
    ) -> None:
        module = get_study(name).load()
        scale = module.FULL if full else module.DEFAULT
        T = parse_count(horizon, "--horizon") if horizon is not None else scale["horizon"]
        runs = runs or scale["runs"]
        check_output(out, "--out", directory=True)
        extra = {k: v for k, v in scale.items() if k not in ("horizon", "runs")}  # e.g. which problems
        if dry_run:
            _dry_run(name, module, T, runs, worker_count(jobs), probe_seconds, out, seed, extra)
            return
        console.print(f"{name}: horizon {T:,}, {runs} runs, {worker_count(jobs)} jobs, seed {seed}, out {out}", markup=False)
        table = module.run_study(horizon=T, runs=runs, seed=seed, jobs=worker_count(jobs), out=out,
                                 progress=sys.stderr.isatty(), **extra)
        text = module.report(table)
        figures = module.figures(table, out)
        (out / f"{name}.md").write_text(text + "\n\n" + "\n".join(f"![{p.stem}]({p.name})" for p in figures) + "\n")
        claims = write_claims(module.claim_rows(table), out)
        console.print(text, markup=False)
        console.print(f"wrote {out / f'{name}.md'}, {claims} and {len(figures)} figures", markup=False)


def _dry_run(name: str, module, horizon: int, runs: int, jobs: int, seconds: float, out: Path, seed: int,
             extra: dict) -> None:
    """Print the study's work at this scale and its core-hours at the steps/s measured now; write nothing."""
    from irbandits.studies.estimate import estimate

    works = module.plan(horizon=horizon, runs=runs, out=out, seed=seed, **extra)
    table = estimate(works, seconds)
    hours = table.core_hours.sum()
    console.print(make_table(table, f"{name} --dry-run: horizon {horizon:,}, {runs} runs; steps/s measured "
                             f"now, ~{seconds:g} s per algorithm and problem, from step 0 (nothing run or written)"))
    console.print(f"{name}: {table.steps.sum():,} steps in all, about {_hours(hours)} core-hours; {_hours(hours / jobs)} "
                  f"hours on {jobs} worker{'s' * (jobs > 1)} (simulation only: worker start-up and reports not "
                  "counted)", markup=False)


def _hours(h: float) -> str:
    return f"{h:,.0f}" if h >= 100 else f"{h:.3g}"


for _name, _s in STUDIES.items():
    if _s.online:
        _online_study(_name)
