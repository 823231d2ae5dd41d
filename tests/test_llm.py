"""Language-model assessors (:mod:`irbandits.judging.llm`) against a stub OpenAI-compatible server
(``llm_stub.py``): both orders, retries, give-up, timeouts, the cache, unsure pairs, cost, the
concurrency limit, templates, spec errors, ``judge run --llm`` and ``serve --llm``; every count is
checked against the stub's own log."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import cli_error, cli_output, run_cli
from llm_stub import Stub

from irbandits.errors import IrbanditsError
from irbandits.judging.llm import DEFAULT_TEMPLATE, LLMJudge, fill, parse_llm_spec


def P(strength: int) -> str:
    return f"passage of strength {strength}"


def test_both_orders_are_asked_and_agreeing_orders_decide():
    with Stub() as stub:
        judge = LLMJudge(stub.url, model="m")
        weird = "passage of strength 9 {passage1} \"quoted\" <b>&amp;</b>"
        assert judge("t1", "why?", P(5), weird) == "right"
        assert judge("t1", "why?", P(7), P(3)) == "left"
        assert [r["status"] for r in stub.log] == [200] * 4
        assert stub.prompts() == [fill(DEFAULT_TEMPLATE, "why?", P(5), weird), fill(DEFAULT_TEMPLATE, "why?", weird, P(5)),
                                  fill(DEFAULT_TEMPLATE, "why?", P(7), P(3)), fill(DEFAULT_TEMPLATE, "why?", P(3), P(7))]
        assert f"Passage 1: {P(5)}\n\nPassage 2: {weird}\n\n" in stub.log[0]["prompt"]   # verbatim
        assert {(r["path"], r["model"], r["temperature"], r["authorization"]) for r in stub.log} == {
            ("/v1/chat/completions", "m", 0, None)}
        assert judge.usage() == dict(calls=4, cached=0, prompt_tokens=400, completion_tokens=8, cost_usd=0.0,
                                     unsure=0, errors=0)


@pytest.mark.parametrize("replies, first", [(["I cannot decide", "2"], None), (["1", "no idea"], "left"),
                                            (["1", "1"], "left"), (["Passage 2", "Passage 2."], "right")])
def test_disagreeing_orders_and_unparsable_replies_are_unsure(replies, first):
    with Stub(replies=replies) as stub:
        judge = LLMJudge(stub.url)
        assert judge.decide("t", "q", P(1), P(2)) == ("unsure", first)
        assert len(stub.log) == 2 and judge.usage()["unsure"] == 1


def test_a_position_bias_makes_pairs_unsure():
    with Stub(bias=1.0) as stub:        # always "1": each order prefers the passage shown first
        judge = LLMJudge(stub.url)
        assert [judge(str(i), "q", P(i), P(10 - i)) for i in range(4)] == ["unsure"] * 4
        assert judge.usage()["unsure"] == 4 and judge.usage()["calls"] == len(stub.log) == 8


def test_429_and_5xx_are_retried_with_back_off_and_retry_after():
    waits = []
    with Stub(failures=[429, 500, 503]) as stub:
        judge = LLMJudge(stub.url, backoff=1.0, sleep=waits.append)
        assert judge("t", "q", P(2), P(1)) == "left"
        assert [r["status"] for r in stub.log] == [429, 500, 503, 200, 200]
        assert waits == [0.0, 2.0, 4.0]     # Retry-After: 0, then 1 s doubled per try
        assert judge.usage() | {"cost_usd": 0} == dict(calls=2, cached=0, prompt_tokens=200, completion_tokens=4,
                                                       cost_usd=0, unsure=0, errors=3)


def test_it_gives_up_after_n_tries_naming_the_endpoint_and_the_last_status(monkeypatch):
    monkeypatch.setenv("IRB_TEST_KEY", "sk-very-secret")
    with Stub(failures=[500, 502, 503, 500]) as stub:
        _, judge = parse_llm_spec(f"j={stub.url},tries=3,key-env=IRB_TEST_KEY")
        judge.sleep = lambda s: None
        with pytest.raises(IrbanditsError) as err:
            judge("t", "q", P(1), P(2))
        assert str(err.value) == f"LLM endpoint {stub.url}: no reply after 3 tries (last: HTTP 503)"
        assert [r["status"] for r in stub.log] == [500, 502, 503]
        assert {r["authorization"] for r in stub.log} == {"Bearer sk-very-secret"}
        assert "sk-very" not in repr(judge) and judge.usage()["errors"] == 3
    with Stub(failures=[401]) as stub:
        with pytest.raises(IrbanditsError, match=r": HTTP 401 \(not retried\)"):
            LLMJudge(stub.url)("t", "q", P(1), P(2))
        assert len(stub.log) == 1
    with socket.socket() as s:              # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(IrbanditsError, match=r"no reply after 2 tries \(last: connection error"):
        LLMJudge(url, tries=2, sleep=lambda s: None)("t", "q", P(1), P(2))


def test_a_timeout_is_retried():
    waits = []
    with Stub(failures=["slow"], delay=30) as stub:
        judge = LLMJudge(stub.url, timeout=0.5, sleep=waits.append)
        assert judge("t", "q", P(1), P(2)) == "right"
        assert [r["status"] for r in stub.log] == ["slow", 200, 200] and waits == [1.0]
        assert judge.usage()["errors"] == 1 and judge.usage()["calls"] == 2


def test_the_cache_makes_a_rerun_cost_nothing(tmp_path):
    pairs = [(str(i), "q", P(i), P(i + 3)) for i in range(5)]
    with Stub() as stub:
        spec = f"j={stub.url},model=m,price-in=1,cache={tmp_path / 'replies.sqlite'}"
        first = [parse_llm_spec(spec)[1](*p) for p in pairs]
        assert first == ["right"] * 5 and len(stub.log) == 10
        judge = parse_llm_spec(spec)[1]      # a new judge on the same file: a rerun
        assert [judge(*p) for p in pairs] == first and len(stub.log) == 10
        assert judge.usage() == dict(calls=0, cached=10, prompt_tokens=0, completion_tokens=0, cost_usd=0.0,
                                     unsure=0, errors=0)
        other = parse_llm_spec(f"j={stub.url},model=other,cache={tmp_path / 'replies.sqlite'}")[1]
        assert other(*pairs[0]) == "right" and len(stub.log) == 12   # the key has the model
        memory = LLMJudge(stub.url)         # no cache file: in memory, for this judge
        memory(*pairs[0]), memory(*pairs[0])
        assert len(stub.log) == 14 and memory.usage()["cached"] == 2


def test_cost_counts_tokens_times_prices():
    with Stub(usage=(1234, 7)) as stub:
        judge = parse_llm_spec(f"j={stub.url},price-in=3,price-out=15")[1]
        for i in range(3):
            judge(str(i), "q", P(i), P(9))
        u = judge.usage()
        assert u["calls"] == len(stub.log) == 6
        assert (u["prompt_tokens"], u["completion_tokens"]) == (6 * 1234, 6 * 7)
        assert u["cost_usd"] == pytest.approx((6 * 1234 * 3 + 6 * 7 * 15) / 1e6)


def test_the_concurrency_limit_holds_over_threads():
    with Stub(hold=0.2) as stub:
        judge = parse_llm_spec(f"j={stub.url},concurrency=2")[1]
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: judge(str(i), "q", P(i), P(20)), range(8)))
        assert answers == ["right"] * 8 and len(stub.log) == 16
        assert stub.max_in_flight == 2      # 8 threads asked at once; 2 got through


def test_an_organisers_template_file(tmp_path):
    template = tmp_path / "prompt.txt"
    template.write_text("Query: {query}\nA) {passage1}\nB) {passage2}\nIs A (1) or B (2) better? {not a field}\n")
    with Stub() as stub:
        judge = parse_llm_spec(f"j={stub.url},template={template}")[1]
        assert judge("t", "who {query}?", P(4), P(2)) == "left"
        assert stub.prompts()[0] == f"Query: who {{query}}?\nA) {P(4)}\nB) {P(2)}\nIs A (1) or B (2) better? {{not a field}}\n"
    template.write_text("Query: {query}\nA) {passage1}\nWhich?")
    assert "no {passage2} placeholder" in cli_error("judge", "run", "-", "--llm", f"j=http://h/v1,template={template}",
                                                    "--queries", template, "--texts", template, "--state", tmp_path / "s")


@pytest.mark.parametrize("spec, message", [
    ("nothing", "--llm: give NAME=URL"),
    ("bad name=http://h/v1", "a name uses letters, digits"),
    ("j=ftp://h/v1", "the URL must be http(s)://HOST"),
    ("j=localhost:8000/v1", "the URL must be http(s)://HOST"),
    ("j=http://h:99999/v1", "the URL must be http(s)://HOST"),
    ("j=http://user:pw@h/v1", "no credentials in the URL"),
    ("j=http://h/v1?x=1", "without ? or #"),
    ("j=http://h/v1,colour=red", "--llm j: unknown key 'colour' (keys: model, key-env"),
    ("j=http://h/v1,model", "--llm j: model needs a value"),
    ("j=http://h/v1,model=a,model=b", "--llm j: model is given twice"),
    ("j=http://h/v1,price-in=cheap", "--llm j: price-in must be a number >= 0, got 'cheap'"),
    ("j=http://h/v1,price-out=-1", "--llm j: price-out must be a number >= 0, got '-1'"),
    ("j=http://h/v1,concurrency=0", "--llm j: concurrency must be a whole number >= 1, got '0'"),
    ("j=http://h/v1,tries=2.5", "--llm j: tries must be a whole number >= 1, got '2.5'"),
    ("j=http://h/v1,timeout=nan", "--llm j: timeout must be a number > 0, got 'nan'"),
    ("j=http://h/v1,key-env=IRB_TEST_UNSET_KEY", "the environment variable IRB_TEST_UNSET_KEY (key-env) is not set"),
    ("j=http://h/v1,template=/no/such/file", "template=/no/such/file: cannot read it"),
])
def test_spec_errors_name_the_bad_part(spec, message, monkeypatch):
    monkeypatch.delenv("IRB_TEST_UNSET_KEY", raising=False)
    with pytest.raises(IrbanditsError) as err:
        parse_llm_spec(spec)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.fixture
def campaign(tmp_path):
    """3 topics of 8 passages; d{t}-0 is each topic's strongest."""
    qrels, texts, queries = [], [], []
    for t in (1, 2, 3):
        queries.append(f"{t}\tquestion {t}\n")
        for i in range(8):
            qrels.append(f"{t} 0 d{t}-{i} {3 if i == 0 else 1}\n")
            texts.append(f"d{t}-{i}\tpassage of strength {100 - 10 * i + t}\n")
    for name, lines in (("qrels", qrels), ("texts", texts), ("queries", queries)):
        (tmp_path / name).write_text("".join(lines))
    return tmp_path


def judge_run(campaign, spec: str, *extra) -> str:
    return cli_output("judge", "run", campaign / "qrels", "--llm", spec, "--queries", campaign / "queries", "--texts",
                      campaign / "texts", "--state", campaign / "state.json", "--minimum", 8, *extra)


def test_judge_run_with_an_llm_end_to_end(campaign):
    from irbandits.judging.topk import TopKProcess

    with Stub(usage=(50, 1)) as stub:
        spec = f"j={stub.url},model=m,price-in=2,price-out=10,concurrency=3,cache={campaign / 'c.sqlite'}"
        out = judge_run(campaign, spec)
        calls = len(stub.log)
        proc = TopKProcess.load(campaign / "state.json")
        total = sum(len(t.log) for t in proc.topics.values())
        assert calls == 2 * total and f"{total} judgments by j; wrote" in out
        assert all(proc.best()[t] == [f"d{t}-0"] for t in proc.topics)
        cost = (calls * 50 * 2 + calls * 10) / 1e6
        assert (f"usage: {calls} calls, 0 cached, {calls * 50} prompt + {calls} completion tokens, "
                f"cost ${cost:.4f}, 0 failed attempts") in " ".join(out.split())
        again = judge_run(campaign, spec, "--force")          # the cache answers: no call
        assert len(stub.log) == calls and f"usage: 0 calls, {calls} cached" in again
        assert "give --assessor or --llm" in cli_error("judge", "run", campaign / "qrels", "--llm", spec, "--assessor",
                                                       "lexical", "--queries", campaign / "queries", "--texts",
                                                       campaign / "texts", "--state", campaign / "s.json")


def test_judge_run_answers_unsure_pairs_by_the_first_order(campaign):
    from irbandits.judging.topk import TopKProcess

    with Stub(bias=1.0) as stub:      # "1" to everything: every pair unsure, the first order says left
        out = " ".join(judge_run(campaign, f"j={stub.url}").split())
        proc = TopKProcess.load(campaign / "state.json")
        answers = [row for t in proc.topics.values() for row in t.log]
        assert f"({len(answers)} unsure, answered by the first order or a coin)" in out
        assert all(winner == left for left, right, winner, *_ in answers) and len(stub.log) == 2 * len(answers)


def served(monkeypatch, *args):
    """The app `irbandits serve ARGS` would run (uvicorn.run replaced), or the CLI's error."""
    import uvicorn

    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    monkeypatch.setenv("IRBANDITS_ADMIN_TOKEN", "t" * 32)
    result = run_cli("serve", *args)
    return apps[0] if apps else result.exception


def test_serve_llm_registers_the_name(tmp_path, monkeypatch):
    with Stub() as stub:
        app = served(monkeypatch, "--db", f"sqlite:///{tmp_path / 's.db'}", "--llm", f"judge-1={stub.url},model=m",
                     "--assessor", "lex=irbandits.judging.assessors:lexical")
        try:
            registry = app.state.campaigns.automatic
            judge = registry.get("judge-1")
            assert isinstance(judge, LLMJudge) and (judge.url, judge.model) == (stub.url, "m")
            assert {"judge-1", "lex", "lexical"} <= set(registry.names())
            assert judge("t", "q", P(1), P(2)) == "right" and len(stub.log) == 2
        finally:
            app.state.campaigns.stop()
            app.state.engine.dispose()
    db = f"sqlite:///{tmp_path / 'e.db'}"
    assert "the URL must be http(s)" in str(served(monkeypatch, "--db", db, "--llm", "j=ftp://h"))
    assert "'j' is given twice" in str(served(monkeypatch, "--db", db, "--llm", "j=http://h/v1", "--assessor",
                                              "j=irbandits.judging.assessors:coin"))
