"""Crowd campaigns: what a paid crowd study needs around the judging (issue 24, the Yan thesis's design).

A campaign's ``crowd`` settings (:class:`CrowdIn`, checked by :func:`check_crowd`, stored in
``campaigns.crowd``) add, per assessor, in this order:

1. **guidelines** (Markdown, rendered without raw HTML or images by :func:`guidelines_html`) and an
   optional **consent** the assessor agrees to (``POST /api/consent``) before any task;
2. a **practice** round of known-answer pairs, each answered with feedback (right or wrong, and the
   organiser's note); below ``practice_pass`` of them right, the assessor is screened out;
3. the work, in **bundles** when ``bundle`` is set: ``targets`` requests of the process and ``checks``
   test pairs at random places of each bundle (the thesis: 10 + 3). A finished bundle whose checks are
   below ``pass`` right (the issue's reading of the thesis's 75 %) is rejected: its answers leave the
   process, as a flagged assessor's do, and the payment report counts it as rejected. With ``scope``
   "worker" the share counts all of the worker's checks so far, as the thesis did (section 5.1: 3 of 3
   after one HIT, 5 of 6 after two): below it, all their bundles are rejected and they are excluded
   from further work. The flag rule still runs beside either;
4. the end: after ``quota`` answers or ``bundles`` bundles, or ``time_limit`` minutes after the
   assessor's first task, or when the campaign is done, they get the **completion code** (the
   organiser's, or ``"auto"``: their own, :attr:`irbandits.service.models.Assessor.code`) and, with a
   ``completion_url``, a link back to the platform.

The **join link** ``/j/TOKEN`` is a public door: it creates assessors only, at most ``cap`` of them,
records the platform's ids from the URL (:data:`PLATFORM_IDS`), and gives a returning worker their own
assessor again. Its token is derived from the server's secret (:func:`join_token`); rotating it bumps a
generation, closing it stops new arrivals. Knowing a worker's platform id is what opens their
assessor, as on the platforms themselves.

:class:`CrowdState` keeps one campaign's per-assessor bookkeeping, rebuilt from the judgments log like
everything else of the runtime.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import secrets
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

from markupsafe import Markup
from pydantic import Field, StrictFloat, StrictInt, StrictStr, field_validator, model_validator

from irbandits.errors import IrbanditsError
from irbandits.service.validation import Strict

# the ids a platform puts in the join link's query string: the worker, the study (or HIT), the session (or assignment)
PLATFORM_IDS = {"prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"), "mturk": ("workerId", "hitId", "assignmentId")}
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")     # whole ids (fullmatch: "$" would let a final newline in)
_CODE = re.compile(r"[A-Za-z0-9_-]{1,40}")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"   # MTurk's assignmentId while a worker only previews the HIT


class BundleIn(Strict):
    """HIT-style bundles: ``targets`` requests and ``checks`` test pairs each; ``pass``: the share of
    checks right a bundle needs, else it is rejected (``scope`` "bundle"); with ``scope`` "worker" the
    share counts all the worker's checks so far, and below it every bundle of theirs is rejected and
    they get no more work (the thesis: 3 of 3 after one HIT, 5 of 6 after two)."""

    targets: StrictInt = Field(ge=1, le=200)
    checks: StrictInt = Field(ge=1, le=50)
    pass_share: StrictFloat | StrictInt = Field(0.75, ge=0, le=1, alias="pass")
    scope: Literal["bundle", "worker"] = "bundle"

    model_config = Strict.model_config | {"populate_by_name": True}


class CrowdIn(Strict):
    """A campaign's crowd settings (every field optional)."""

    guidelines: StrictStr = Field("", max_length=20_000)
    consent: StrictStr | None = Field(None, max_length=5_000)
    practice: list[list[StrictStr]] = Field([], max_length=50)   # [topic, better, worse] or + a note
    practice_pass: StrictFloat | StrictInt = Field(0, ge=0, le=1)
    quota: StrictInt | None = Field(None, ge=1, le=100_000)     # answers (targets and checks)
    bundles: StrictInt | None = Field(None, ge=1, le=10_000)    # bundles (needs ``bundle``)
    bundle: BundleIn | None = None
    time_limit: StrictInt | None = Field(None, ge=1, le=10_080)  # minutes from the first task
    completion_code: StrictStr | None = None                   # the platform's code, or "auto"
    completion_url: StrictStr | None = Field(None, max_length=500)  # https, may hold {code}

    @field_validator("completion_code")
    @classmethod
    def _code(cls, code: str | None) -> str | None:
        if code is not None and not _CODE.fullmatch(code):
            raise ValueError('a completion code is 1 to 40 letters, digits, "_" or "-" (or "auto")')
        return code

    @field_validator("completion_url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        if url is not None and (not re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?(/[^\s<>\"']*)?", url)):
            raise ValueError("the completion URL must be an https:// address without spaces or quotes")
        return url

    @model_validator(mode="after")
    def _together(self):
        if self.bundles is not None and self.bundle is None:
            raise ValueError('"bundles" counts bundles: give "bundle" too')
        if self.completion_url is not None and self.completion_code is None:
            raise ValueError('"completion_url" needs a "completion_code" (the page shows it too)')
        return self


def check_crowd(given: dict[str, Any] | None, kind: str, topics: dict[str, str], texts: dict[str, str],
                tests: list | None) -> dict[str, Any] | None:
    """The stored crowd settings of a new campaign (None: none given), checked against its topics,
    texts and test pairs; raises :class:`IrbanditsError` naming the field."""
    if not given:
        return None
    try:
        crowd = CrowdIn.model_validate(given)
    except ValueError as exc:   # pydantic's ValidationError
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise IrbanditsError(f"crowd.{where}: {first['msg'].removeprefix('Value error, ')}") from None
    if (crowd.practice or crowd.bundle) and kind != "preference":
        raise IrbanditsError("crowd: practice pairs and bundles are for preference campaigns")
    if crowd.bundle and not tests:
        raise IrbanditsError("crowd.bundle: bundles need known-answer test pairs (tests)")
    for i, pair in enumerate(crowd.practice):
        if len(pair) not in (3, 4):
            raise IrbanditsError(f"crowd.practice[{i}]: a practice pair is [topic, better, worse] or with a note")
        topic, better, worse = pair[:3]
        if topic not in topics:
            raise IrbanditsError(f"crowd.practice[{i}]: no query for topic {topic}")
        check_known_pair(f"crowd.practice[{i}]", better, worse, texts)
    return crowd.model_dump(by_alias=True)


def check_known_pair(where: str, better: str, worse: str, texts: dict[str, str]) -> None:
    """A pair with a known answer (a practice or test pair) names two different documents with texts."""
    if better == worse:
        raise IrbanditsError(f"{where}: an item cannot be compared with itself ({better})")
    for docno in (better, worse):
        if docno not in texts:
            raise IrbanditsError(f"{where}: no text for document {docno}")


def guidelines_html(markdown: str) -> Markup:
    """The guidelines as HTML: CommonMark and tables, raw HTML shown as text, no images, links only to
    http(s) and mailto addresses (markdown-it's link check)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
    md.validateLink = lambda url: re.match(r"^(https?:|mailto:|#)", url.strip(), re.I) is not None
    return Markup(md.render(markdown))


def _mac(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:43]


def join_token(secret: bytes, campaign: int, generation: int) -> str:
    """The join link's token of ``campaign`` in ``generation`` (never stored)."""
    return _mac(secret, f"join:{campaign}:{generation}")


def worker_token(secret: bytes, campaign: int, worker: str, link: int | None = None) -> str:
    """The assessor token a joined worker gets, the same each time they come back until the organiser
    re-issues their link (``link``: how many times)."""
    return _mac(secret, f"worker:{campaign}:{worker}" + (f":{link}" if link else ""))


def new_code() -> str:
    """An assessor's own completion code (10 hex digits)."""
    return secrets.token_hex(5).upper()


def platform_ids(params: dict[str, str]) -> tuple[str, dict[str, str]] | None:
    """From a join link's query string: the worker (``"prolific:PID"``) and the platform's ids, or
    None when it names no worker; a malformed id raises :class:`IrbanditsError` naming it."""
    for platform, names in PLATFORM_IDS.items():
        if names[0] in params:
            ids = {"platform": platform}
            for name in names:
                value = params.get(name)
                if value is None:
                    continue
                if not _ID.fullmatch(value):
                    raise IrbanditsError(f"{name}: an id is 1 to 64 letters, digits, '_' or '-'")
                ids[name] = value
            return f"{platform}:{ids[names[0]]}", ids
    return None


def platform_columns(ids: dict[str, str] | None) -> dict[str, str | None]:
    """An assessor's platform ids as the exports' columns: platform, worker, study (Prolific's study,
    MTurk's HIT) and session (Prolific's session, MTurk's assignment); None for an assessor who did not
    join through a platform."""
    ids = ids or {}
    names = PLATFORM_IDS.get(ids.get("platform"), (None, None, None))
    return dict(platform=ids.get("platform"), worker=ids.get(names[0]), study=ids.get(names[1]),
                session=ids.get(names[2]))


@dataclass
class Person:
    """One assessor's crowd bookkeeping."""

    practice: list[bool] = field(default_factory=list)  # their practice answers, right or wrong, in order
    counted: list[Any] = field(default_factory=list)    # their answers and checks that count, in order
    verdicts: dict[int, bool] = field(default_factory=dict)  # finished bundle -> accepted
    started: float | None = None                        # when their first task was leased


class CrowdState:
    """One campaign's crowd settings and per-assessor state (practice, bundles, start, consent)."""

    def __init__(self, settings: dict[str, Any] | None, campaign: int):
        self.campaign = campaign
        self.configure(settings)
        self.people: dict[int, Person] = defaultdict(Person)
        self.consented: set[int] = set()
        self.exempt: set[int] = set()        # automatic assessors: no consent, practice or quota

    def configure(self, settings: dict[str, Any] | None) -> None:
        """Take (new) settings; the assessors' state stays."""
        self.s = settings or {}
        self.practice = [tuple(p[:3]) for p in self.s.get("practice", [])]
        self.notes = [p[3] if len(p) > 3 else "" for p in self.s.get("practice", [])]
        bundle = self.s.get("bundle") or {}
        self.size = bundle.get("targets", 0) + bundle.get("checks", 0)

    def change_problem(self, settings: dict[str, Any] | None, started: bool) -> str | None:
        """Why the settings cannot change to ``settings`` now, or None: once work was logged, the
        practice pairs and the bundles stay (the log's verdicts were made with them)."""
        new = settings or {}
        for name in ("practice", "bundle"):
            if started and (new.get(name) or None) != (self.s.get(name) or None):
                return f"crowd.{name}: it cannot change once assessors have worked (the log was judged with it)"
        return None

    # ----- stages --------------------------------------------------------------------------------
    def stage(self, assessor: int, now: float, done: bool) -> str:
        """Where ``assessor`` is: consent, practice, screened-out (the practice round), excluded (the
        checks, with bundles of scope "worker"), finished or work."""
        if assessor in self.exempt:
            return "work"
        if self.s.get("consent") and assessor not in self.consented:
            return "consent"
        p = self.people[assessor]
        if len(p.practice) < len(self.practice):
            return "practice"
        if self.practice and sum(p.practice) < self.s.get("practice_pass", 0) * len(self.practice):
            return "screened-out"
        if self.size and self.s["bundle"].get("scope") == "worker" and not all(p.verdicts.values()):
            return "excluded"
        return "finished" if done or self.used_up(assessor, now) else "work"

    def used_up(self, assessor: int, now: float) -> bool:
        """Whether ``assessor``'s quota (answers or bundles) or time is used up."""
        p, s = self.people[assessor], self.s
        if s.get("quota") and len(p.counted) >= s["quota"]:
            return True
        if s.get("bundles") and len(p.verdicts) >= s["bundles"]:
            return True
        return bool(s.get("time_limit") and p.started is not None and now >= p.started + 60 * s["time_limit"])

    def next_practice(self, assessor: int) -> tuple[str, str, str, str]:
        """The assessor's next practice pair (topic, left, right, "practice"), sides at random."""
        i = len(self.people[assessor].practice)
        topic, better, worse = self.practice[i]
        swap = random.Random(f"{self.campaign}:{assessor}:{i}").random() < 0.5
        return (topic, worse, better, "practice") if swap else (topic, better, worse, "practice")

    def practised(self, j) -> dict[str, Any]:
        """Record a practice answer; the feedback the page shows (right, the better docno, the note)."""
        p = self.people[j.assessor_id]
        i = len(p.practice)
        better = self.practice[i][1] if i < len(self.practice) else None
        p.practice.append(j.winner == better)
        return dict(correct=j.winner == better, better=better, note=self.notes[i] if i < len(self.notes) else "")

    # ----- bundles -------------------------------------------------------------------------------
    def check_due(self, assessor: int) -> bool | None:
        """Bundles: whether the assessor's next counted task is a check (None: no bundles)."""
        if not self.size:
            return None
        n = len(self.people[assessor].counted)
        index, place = divmod(n, self.size)
        checks = random.Random(f"{self.campaign}:{assessor}:bundle:{index}").sample(range(self.size),
                                                                                      self.s["bundle"]["checks"])
        return place in checks

    def counted(self, j) -> list[int]:
        """Count an answer or check of ``j``'s assessor; when it finishes a bundle that fails the
        rule, the ids of the bundle's target answers (to take out of the process), else []."""
        p = self.people[j.assessor_id]
        p.counted.append(j)
        if not self.size or len(p.counted) % self.size:
            return []
        index = len(p.counted) // self.size - 1
        worker = self.s["bundle"].get("scope") == "worker"
        judged = p.counted if worker else p.counted[index * self.size:]
        tests = [x for x in judged if x.kind == "test"]
        right = sum(getattr(x, "correct", False) for x in tests)
        p.verdicts[index] = not tests or right >= self.s["bundle"]["pass"] * len(tests)
        if p.verdicts[index]:
            return []
        if worker:   # every bundle of theirs goes
            p.verdicts = dict.fromkeys(p.verdicts, False)
        return [x.id for x in judged if x.kind == "answer"]

    def uncounted(self, j) -> None:
        """Take back a retracted answer or check (only ever the latest, of an unfinished bundle)."""
        p = self.people[j.assessor_id]
        if p.counted and p.counted[-1].id == j.id:
            p.counted.pop()

    def sealed(self, j) -> bool:
        """Whether ``j`` is part of a finished bundle (it can no longer be undone)."""
        p = self.people[j.assessor_id]
        return bool(self.size) and j in p.counted and p.counted.index(j) < len(p.verdicts) * self.size

    # ----- the end -------------------------------------------------------------------------------
    def completion(self, own_code: str | None) -> dict[str, str] | None:
        """The code (and the platform's link) a finished assessor gets, or None."""
        code = self.s.get("completion_code")
        if code is None:
            return None
        code = own_code if code == "auto" else code
        url = self.s.get("completion_url")
        return dict(code=code) | ({"url": url.replace("{code}", code)} if url else {})

    def progress(self, assessor: int, now: float, done: bool) -> dict[str, Any]:
        """What ``GET /api/me`` adds for a crowd campaign."""
        p, s = self.people[assessor], self.s
        out: dict[str, Any] = dict(stage=self.stage(assessor, now, done),
                                   practice=dict(done=len(p.practice), total=len(self.practice),
                                                 correct=sum(p.practice)))
        if self.size:
            out["bundles"] = dict(size=self.size, done=len(p.verdicts), accepted=sum(p.verdicts.values()),
                                  current=len(p.counted) - len(p.verdicts) * self.size, quota=s.get("bundles"))
        if s.get("quota"):
            out["quota"] = dict(answers=len(p.counted), of=s["quota"])
        if s.get("time_limit") and p.started is not None:
            out["seconds_left"] = max(0, round(p.started + 60 * s["time_limit"] - now))
        return out

    def payment(self, assessor: int, rows: list, lease_seconds: float, issued: dict[int, float]) -> dict[str, Any]:
        """One line of the payment report from the assessor's log rows (``rows``, in order)."""
        p = self.people[assessor]
        worked = [j for j in rows if j.kind in ("answer", "test", "repeat", "practice", "skip")]
        active = sum(min(lease_seconds, max(0.0, j.created_at - issued[j.task_id])) for j in worked
                     if j.task_id in issued)
        return dict(answers=sum(j.kind == "answer" for j in p.counted),
                    checks=sum(j.kind in ("test", "repeat") for j in p.counted),
                    checks_right=sum(bool(getattr(j, "correct", False)) for j in p.counted),
                    practice=len(p.practice), practice_right=sum(p.practice),
                    skips=sum(j.kind == "skip" for j in rows),
                    bundles=len(p.verdicts), accepted=sum(p.verdicts.values()),
                    rejected=len(p.verdicts) - sum(p.verdicts.values()), active_seconds=round(active, 1),
                    first=min((j.created_at for j in worked), default=None),
                    last=max((j.created_at for j in worked), default=None))
