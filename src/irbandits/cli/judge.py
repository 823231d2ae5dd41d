"""``irbandits judge init|requests|add|status|qrels|plan|run|texts``: run the top-k preference process from files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import LLM_SPEC, check_file, check_output, console, make_table, reading, source_name, writing
from irbandits.errors import IrbanditsError

app = typer.Typer(no_args_is_help=True,
                  help="Find each topic's best items with pairwise preference judgments (top-k process).")
STATE = typer.Option(..., "--state", help="judging state file (JSON, written atomically)")
OUT = typer.Option(Path("-"), help="output file; - is standard output")
# the top-k process's settings, shared by init, plan and run
MINIMUM = typer.Option(5, help="add grades top-down until a pool has this many items")
N_PAIRS = typer.Option(7, help="pairs per item in a pruning phase")
M_FINAL = typer.Option(9, help="pools of at most m items go to the final phase")
EXTRA = typer.Option(0, help="extra finalization phases")
K_DEPTH = typer.Option(5, help="depth of the preference qrels (extended for ties)")
KEEP = typer.Option("wins", help="pruning rule: wins (wins > n // 2) or borda (wins / pairs >= 0.5)")
SEED = typer.Option(0, help="seeds the pairings and left / right placement")
PASSAGES = ("passages: a TSV file (docno<TAB>text), a CSV with a header or JSON lines (docno / id / doc_id and "
            "text / body / passage), or irds:DATASET_ID (a collection of the ir_datasets package on this machine)")
TOPICS = ("topics: a TSV file (topic<TAB>query), a CSV with a header or JSON lines (topic / qid / query_id / id, "
          "query / title / text, optional description and narrative), or irds:DATASET_ID")


def _source(value: str, option: str) -> str | Path:
    """``irds:DATASET_ID`` as it is, else a readable file (see :func:`irbandits.judging.texts.load_passages`)."""
    from irbandits.judging.texts import IRDS

    return value if value.startswith(IRDS) else check_file(Path(value), option)


def _docnos(pools: dict[str, list[str]]) -> set[str]:
    return {docno for items in pools.values() for docno in items}


def _load(state: Path):
    from irbandits.judging.topk import TopKProcess

    return TopKProcess.load(check_file(state, "--state"))


def _new_pools(qrels: Path, state: Path, force: bool, minimum: int) -> dict[str, list[str]]:
    """The judging pools of ``qrels`` for a new state file (one that exists is kept, unless ``force``)."""
    from irbandits.io import read_qrels
    from irbandits.judging.pools import grade_pools

    if check_output(state, "--state").exists() and not force:
        raise IrbanditsError(f"{state} exists; use --force to start over")
    with reading(qrels, "QRELS") as path:
        return grade_pools(read_qrels(path), minimum)


@app.command()
def init(
    qrels: Path = typer.Argument(..., help="graded qrels (topic iteration docno grade); - is standard input"),
    state: Path = STATE,
    minimum: int = MINIMUM,
    n: int = N_PAIRS,
    m: int = M_FINAL,
    extra: int = EXTRA,
    k: int = K_DEPTH,
    keep: str = KEEP,
    seed: int = SEED,
    texts: Optional[str] = typer.Option(None, help=f"{PASSAGES}: report exact duplicates in each pool"),
    merge_duplicates: bool = typer.Option(False, help="judge one item per group of exact duplicates"),
    force: bool = typer.Option(False, help="overwrite an existing state file"),
) -> None:
    """Build judging pools from graded qrels and start the process."""
    from irbandits.judging.duplicates import find_duplicates
    from irbandits.judging.duplicates import merge_duplicates as merge
    from irbandits.judging.pools import pool_sizes
    from irbandits.judging.texts import load_passages
    from irbandits.judging.topk import TopKProcess

    if merge_duplicates and texts is None:
        raise IrbanditsError("--merge-duplicates needs --texts")
    pools = _new_pools(qrels, state, force, minimum)
    aliases = None
    if texts is not None:
        text_of = load_passages(_source(texts, "--texts"), _docnos(pools), progress=sys.stderr.isatty())
        groups = find_duplicates(pools, text_of)
        n_dup = sum(len(g) for gs in groups.values() for g in gs)
        console.print(f"exact duplicates: {n_dup} items in {sum(map(len, groups.values()))} groups "
                      f"over {len(groups)} topics", markup=False)
        for topic, gs in groups.items():
            for g in gs:
                console.print(f"  {topic}: {' = '.join(g)}", markup=False)
        if merge_duplicates:
            pools, aliases = merge(pools, groups)
            console.print("merged: one item per group is judged", markup=False)
    proc = TopKProcess(pools, n=n, m=m, extra=extra, k=k, keep=keep, seed=seed, aliases=aliases)
    proc.save(state)
    s = pool_sizes(pools)["size"]
    console.print(f"{len(s)} topics, pool sizes {s.min()}-{s.max()} (median {s.median():g}, mean {s.mean():.1f}); "
                  f"{len(proc.requests())} judgments requested; wrote {state}", markup=False)


@app.command()
def requests(state: Path = STATE, out: Path = OUT) -> None:
    """Write the judgments needed next, one `topic left right` line each."""
    check_output(out, "--out", dash=True)
    pairs = _load(state).requests()
    with writing(out, "--out") as fh:
        fh.writelines(f"{topic} {left} {right}\n" for topic, left, right in pairs)


@app.command()
def add(
    judgments: Path = typer.Argument(..., help="answers file (`topic left right winner`, the winner a docno); "
                                     "- is standard input"),
    state: Path = STATE,
    allow_unrequested: bool = typer.Option(False, help="keep answers no open or past phase asked for, and "
                                           "answers beyond a pair's requests, for later phases"),
) -> None:
    """Add answers: `topic left right winner` lines, the pair as `judge requests` wrote it and, as the
    winner, the docno of the preferred item. Any order, partial; all or none are recorded. An answer
    to a pair that no phase requested, or one answer too many for a pair (the same file added twice),
    is refused naming the line, unless --allow-unrequested."""
    from irbandits.io import read_judgments

    proc = _load(state)
    before = {r["topic"]: (r["phase"], r["kind"]) for r in proc.status()}
    with reading(judgments, "JUDGMENTS") as path:
        table = read_judgments(path)
    for row in table.itertuples(index=False):
        try:
            proc.add(row.topic, row.left, row.right, row.winner, unrequested=allow_unrequested)
        except IrbanditsError as exc:
            hint = "; --allow-unrequested keeps it" if "asked for" in str(exc) else ""
            raise IrbanditsError(f"{source_name(judgments)}, line {row.line}: {exc}{hint}") from None
    proc.save(state)
    moved = sum((r["phase"], r["kind"]) != before[r["topic"]] for r in proc.status())
    console.print(f"added {len(table)} judgments; {moved} topics moved to a new phase; "
                  f"{len(proc.requests())} judgments requested", markup=False)


@app.command()
def status(state: Path = STATE) -> None:
    """Per topic: pool size, phase, judgments outstanding and received."""
    import pandas as pd

    df = pd.DataFrame(_load(state).status())
    console.print(make_table(df, f"{(df.kind == 'done').sum()} of {len(df)} topics done"))


@app.command()
def qrels(
    state: Path = STATE,
    best: bool = typer.Option(False, help="only the best set of each topic (value 1)"),
    final: Optional[list[int]] = typer.Option(None, help="score only these final phases (1 = first); "
                                                         "default all"),
    out: Path = OUT,
) -> None:
    """Preference qrels of the finished topics: `topic Q0 docno value`, higher preferred."""
    check_output(out, "--out", dash=True)
    top = _load(state).top(final, best=best)
    with writing(out, "--out") as fh:
        for topic, items in top.items():
            fh.writelines(f"{topic} Q0 {docno} {1 if best else f'{value:.6g}'}\n" for docno, value in items.items())


@app.command()
def plan(
    qrels: Optional[Path] = typer.Argument(None, help="graded qrels: the pools are built as `judge init` builds them"),
    pool_sizes: Optional[str] = typer.Option(None, help="pool sizes instead of qrels: comma-separated, one a topic"),
    accuracy: float = typer.Option(0.75, help="the chance that an assessor prefers the better item"),
    accuracy_from: Optional[Path] = typer.Option(None, help="a finished campaign's quality JSON (GET /api/campaigns/"
                                                            "CID/quality): its test-pair accuracy"),
    assessors_per_pair: int = typer.Option(1, help="assessors answering each request (majority decides)"),
    runs: int = typer.Option(100, help="simulated campaigns"),
    cost_per_judgment: Optional[float] = typer.Option(None, "--cost-per-judgment", "--human-price",
                                                      help="price of one person's judgment: adds the cost"),
    auto_accuracy: Optional[float] = typer.Option(None, help="an automatic assessor in front: the chance that "
                                                  "its sure answers prefer the better item; plans it beside the "
                                                  "all-human campaign"),
    auto_unsure: float = typer.Option(0.0, help="with --auto-accuracy: the share of pairs it is unsure of "
                                      "(they go to people)"),
    auto_bias: float = typer.Option(0.0, help="with --auto-accuracy: the share of pairs it answers the "
                                    "first-shown item regardless"),
    auto_price: Optional[float] = typer.Option(None, help="with --auto-accuracy: its price per pair asked"),
    audit: float = typer.Option(0.1, help="with --auto-accuracy: the share of its sure answers also sent to "
                                "people, measuring it"),
    auto_threshold: float = typer.Option(0.7, help="with --auto-accuracy: its answers stop counting once the "
                                         "99 % interval of its agreement with people's audits is below this"),
    minimum: int = MINIMUM,
    n: int = N_PAIRS,
    m: int = M_FINAL,
    extra: int = EXTRA,
    keep: str = KEEP,
    seed: int = typer.Option(0, help="seeds the simulations"),
    format: str = typer.Option("table", "--format", help="table or json"),
) -> None:
    """Before launch: judgments (mean, 5th and 95th percentile), assessors needed and the chance of
    finding each topic's best item, from simulated campaigns (irbandits.judging.plan); with
    --auto-accuracy, also with an automatic assessor in front (irbandits.judging.hybrid's rule)."""
    import json

    import pandas as pd

    from irbandits.judging.hybrid import SimulatedJudge
    from irbandits.judging.plan import simulate, summary

    if format not in ("table", "json"):
        raise IrbanditsError(f"--format must be table or json, got {format!r}")
    for name, price in (("--human-price", cost_per_judgment), ("--auto-price", auto_price)):
        if price is not None and not price >= 0:
            raise IrbanditsError(f"{name} must be at least 0, got {price}")
    if auto_accuracy is None and (auto_price is not None or (auto_unsure, auto_bias, audit, auto_threshold)
                                  != (0.0, 0.0, 0.1, 0.7)):
        raise IrbanditsError("--auto-unsure, --auto-bias, --auto-price, --audit and --auto-threshold describe an "
                             "automatic assessor: give --auto-accuracy too")
    judge = None
    if auto_accuracy is not None:
        for name, value in (("--auto-accuracy", auto_accuracy), ("--auto-unsure", auto_unsure),
                            ("--auto-bias", auto_bias), ("--audit", audit), ("--auto-threshold", auto_threshold)):
            if not 0 <= value <= 1:
                raise IrbanditsError(f"{name} must be in [0, 1], got {value}")
        judge = SimulatedJudge(auto_accuracy, auto_bias, auto_unsure)
    if (qrels is None) == (pool_sizes is None):
        raise IrbanditsError("give QRELS or --pool-sizes (one of them)")
    if runs < 1:
        raise IrbanditsError(f"--runs must be at least 1, got {runs}")
    if qrels is not None:
        from irbandits.io import read_qrels
        from irbandits.judging.pools import grade_pools

        with reading(qrels, "QRELS") as path:
            sizes = {t: len(p) for t, p in grade_pools(read_qrels(path), minimum).items() if p}
    else:
        try:
            sizes = {str(i + 1): int(x) for i, x in enumerate(pool_sizes.split(","))}
        except ValueError:
            raise IrbanditsError(f"--pool-sizes: whole numbers separated by commas, got {pool_sizes!r}") from None
        if any(k < 1 for k in sizes.values()):
            raise IrbanditsError(f"--pool-sizes: every pool has at least 1 item, got {pool_sizes!r}")
    if accuracy_from is not None:
        try:
            fitted = json.loads(check_file(accuracy_from, "--accuracy-from").read_text())["accuracy"]
        except (ValueError, KeyError, TypeError):
            raise IrbanditsError(f"{accuracy_from}: not a campaign quality JSON (no \"accuracy\")") from None
        if fitted is None:
            raise IrbanditsError(f"{accuracy_from}: the campaign has no answered test pair to fit an accuracy on")
        accuracy = float(fitted)
    settings = dict(runs=runs, seed=seed, assessors_per_pair=assessors_per_pair, n=n, m=m, extra=extra, keep=keep)
    df = simulate(sizes, accuracy, **settings)
    out = summary(df, cost_per_judgment) | dict(accuracy=accuracy, topics=len(sizes), items=sum(sizes.values()))
    if judge is not None:
        hybrid = simulate(sizes, accuracy, auto=judge, audit=audit, threshold=auto_threshold, **settings)
        out["auto"] = summary(hybrid, cost_per_judgment, auto_price) | dict(
            accuracy=auto_accuracy, unsure=auto_unsure, bias=auto_bias, audit=audit, threshold=auto_threshold)
    if format == "json":
        print(json.dumps(out))
        return
    if judge is not None:
        _print_auto_plan(out, sizes, runs)
        return
    j, a = out["judgments"], out["assessors"]
    rows = [("judgments (mean)", f"{j['mean']:,.0f}"), ("judgments (5-95 %)", f"{j['p5']:,.0f} - {j['p95']:,.0f}"),
            ("judgments (range)", f"{j['min']:,} - {j['max']:,}"),
            ("assessors needed (mean / max)", f"{a['mean']:.1f} / {a['max']}"),
            ("best item found (share of topics)", f"{out['best_found']['mean']:.1%}")]
    if "cost" in out:
        rows.append(("cost (mean, 5-95 %)", f"{out['cost']['mean']:,.2f} ({out['cost']['p5']:,.2f} - "
                                             f"{out['cost']['p95']:,.2f})"))
    title = (f"{len(sizes)} topics, {out['items']} items, accuracy {accuracy:.3g}, "
             f"{assessors_per_pair} assessor(s) per pair, {runs} runs")
    console.print(make_table(pd.DataFrame(rows, columns=["", "plan"]), title))
    hard = sorted(out["best_found"]["topics"].items(), key=lambda kv: kv[1])[:10]
    if hard:
        console.print(make_table(pd.DataFrame([(t, sizes[t], f"{p:.0%}") for t, p in hard],
                                          columns=["topic", "pool", "best found"]),
                             "the topics least likely to find their best item"))


def _print_auto_plan(out: dict, sizes: dict[str, int], runs: int) -> None:
    """The all-human plan and the plan with an automatic assessor in front, side by side."""
    import pandas as pd

    auto = out["auto"]

    def spread(d: dict) -> str:
        return f"{d['mean']:,.0f} ({d['p5']:,.0f} - {d['p95']:,.0f})"

    rows = [("people's judgments (mean, 5-95 %)", spread(out["judgments"]), spread(auto["judgments"])),
            ("automatic pairs (mean, 5-95 %)", "-", spread(auto["automatic"])),
            ("automatic assessor cut off (share of runs)", "-", f"{auto['cutoff']:.0%}"),
            ("best item found (share of topics)", f"{out['best_found']['mean']:.1%}", f"{auto['best_found']['mean']:.1%}")]
    if "cost" in auto:
        cost = [f"{c['mean']:,.2f} ({c['p5']:,.2f} - {c['p95']:,.2f})" if c else "-" for c in (out.get("cost"), auto["cost"])]
        rows.append(("cost (mean, 5-95 %)", *cost))
    title = (f"{len(sizes)} topics, {out['items']} items, people's accuracy {out['accuracy']:.3g}, {runs} runs; "
             f"automatic assessor: accuracy {auto['accuracy']:.3g}, unsure {auto['unsure']:.3g}, bias "
             f"{auto['bias']:.3g}, audit {auto['audit']:.3g}, cut off below {auto['threshold']:.3g}")
    console.print(make_table(pd.DataFrame(rows, columns=["", "all human", "automatic assessor in front"]), title))


@app.command()
def run(
    qrels: Path = typer.Argument(..., help="graded qrels (topic iteration docno grade); - is standard input"),
    assessor: Optional[str] = typer.Option(None, help="module:function called as f(topic, query, left_text, "
                                                      "right_text) -> 'left', 'right' or 'unsure', or a registered "
                                                      "name"),
    llm: Optional[str] = typer.Option(None, help=f"a language-model assessor instead of --assessor: {LLM_SPEC}"),
    queries: str = typer.Option(..., help=TOPICS),
    texts: str = typer.Option(..., help=PASSAGES),
    state: Path = STATE,
    minimum: int = MINIMUM,
    n: int = N_PAIRS,
    m: int = M_FINAL,
    extra: int = EXTRA,
    k: int = K_DEPTH,
    keep: str = KEEP,
    seed: int = SEED,
    force: bool = typer.Option(False, help="overwrite an existing state file"),
) -> None:
    """Run the whole judging loop with an automatic assessor (a Python callable, or a language model on
    an OpenAI-compatible endpoint with --llm): init, then requests -> answers until every topic is done;
    the state file is saved after each round, as `judge add` would. An "unsure" answer is counted and
    replaced (asking again would only hit the cache): by the language model's reply in the first order
    when it parsed, else by a fair coin fixed per pair. A language model's pairs are asked in parallel
    (its concurrency) and its usage is printed at the end."""
    from concurrent.futures import ThreadPoolExecutor

    from irbandits.judging.assessors import load_assessor
    from irbandits.judging.llm import parse_llm_spec
    from irbandits.judging.texts import load_passages, load_topics
    from irbandits.judging.topk import TopKProcess

    if (assessor is None) == (llm is None):
        raise IrbanditsError("give --assessor or --llm (one of them)")
    name, judge = (assessor, load_assessor(assessor)) if llm is None else parse_llm_spec(llm)
    query_of = load_topics(_source(queries, "--queries"))[0]
    texts_source = _source(texts, "--texts")
    pools = _new_pools(qrels, state, force, minimum)
    text_of = load_passages(texts_source, _docnos(pools), progress=sys.stderr.isatty())
    for topic, items in pools.items():
        if items and topic not in query_of:
            raise IrbanditsError(f"{queries}: no query for topic {topic}")
        for docno in items:
            if docno not in text_of:
                raise IrbanditsError(f"{texts}: no text for document {docno} (topic {topic})")
    proc = TopKProcess(pools, n=n, m=m, extra=extra, k=k, keep=keep, seed=seed)
    rounds, unsure = 0, 0

    def answer(request: tuple[str, str, str]) -> tuple[str, bool]:
        topic, left, right = request
        return _answer(judge, name, topic, query_of[topic], text_of[left], text_of[right])

    with ThreadPoolExecutor(getattr(judge, "concurrency", 1)) as pool:
        while requests := proc.requests():
            for (topic, left, right), (side, was_unsure) in zip(requests, pool.map(answer, requests)):
                proc.add(topic, left, right, left if side == "left" else right)
                unsure += was_unsure
            rounds += 1
            proc.save(state)
    proc.save(state)
    total = sum(len(t.log) for t in proc.topics.values())
    note = f" ({unsure} unsure, answered by the first order or a coin)" if unsure else ""
    console.print(f"{len(proc.topics)} topics done in {rounds} rounds: {total} judgments by {name}{note}; "
                  f"wrote {state}", markup=False)
    if hasattr(judge, "usage"):
        u = judge.usage()
        console.print(f"usage: {u['calls']} calls, {u['cached']} cached, {u['prompt_tokens']} prompt + "
                      f"{u['completion_tokens']} completion tokens, cost ${u['cost_usd']:.4f}, "
                      f"{u['errors']} failed attempts", markup=False)


def _answer(judge, name: str, topic: str, query: str, left: str, right: str) -> tuple[str, bool]:
    """The side `judge run` records, and whether the assessor was unsure: an unsure pair takes the side
    an LLM judge's first order preferred when its reply parsed, else a fair coin fixed per pair."""
    from irbandits.judging.assessors import ask, coin

    if hasattr(judge, "decide"):
        side, first = judge.decide(topic, query, left, right)
    else:
        side, first = ask(judge, name, topic, query, left, right), None
    if side != "unsure":
        return side, False
    return first or coin(topic, query, left, right), True


@app.command("texts")
def texts_command(
    source: str = typer.Argument(..., help=PASSAGES),
    qrels: Path = typer.Option(..., help="graded qrels (topic iteration docno grade): their documents are written; "
                                         "- is standard input"),
    topics: Optional[str] = typer.Option(None, help=f"{TOPICS}: the qrels' topics are written too"),
    out: Path = typer.Option(..., help="directory for texts.jsonl (and topics.jsonl), made if missing"),
) -> None:
    """Write the passages of the documents a qrels file names (and its topics, with their description
    and narrative) as JSON lines, ready for the service's campaign form or POST /api/campaigns."""
    from irbandits.io import read_qrels
    from irbandits.judging.texts import load_passages, load_topics

    check_output(out, "--out", directory=True).mkdir(exist_ok=True)
    passages = _source(source, "SOURCE")
    topic_source = None if topics is None else _source(topics, "--topics")
    with reading(qrels, "--qrels") as path:
        judged = read_qrels(path)
    docnos = list(dict.fromkeys(judged.docno.astype(str)))
    text_of = load_passages(passages, docnos, progress=sys.stderr.isatty())
    _write_jsonl(out / "texts.jsonl", ({"docno": d, "text": text_of[d]} for d in docnos if d in text_of))
    missing = [d for d in docnos if d not in text_of]
    console.print(f"wrote {out / 'texts.jsonl'}: {len(docnos) - len(missing)} passages of the {len(docnos)} "
                  f"documents in {source_name(qrels)}", markup=False)
    if missing:
        console.print(f"  no text for {len(missing)}: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}",
                      markup=False)
    if topic_source is not None:
        query_of, notes = load_topics(topic_source)
        wanted = list(dict.fromkeys(judged.topic.astype(str)))
        _write_jsonl(out / "topics.jsonl", ({"topic": t, "query": query_of[t], **notes.get(t, {})}
                                            for t in wanted if t in query_of))
        found = sum(t in query_of for t in wanted)
        console.print(f"wrote {out / 'topics.jsonl'}: {found} of the {len(wanted)} topics, "
                      f"{sum(t in notes for t in wanted)} with a description or narrative", markup=False)


def _write_jsonl(path: Path, records) -> None:
    with writing(path, "--out") as fh:
        fh.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
