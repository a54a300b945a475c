"""The `llm` annotator: formulas and steps from any OpenAI-compatible endpoint, plus the refine pass.

Per trajectory it sends the paper's two curation prompts (Appendix A.1: formula extraction, step
split) and, when asked, the refine prompt first (the paper's o3-mini pass on DeepMath traces).
Answers are checked by `mrtasks.curate.validate`; a rejected answer is asked again with a note
saying why (a new request, so a new cache entry), and after `max_attempts` the trajectory becomes
a `Drop` with a counted reason:

    llm_invalid_json, llm_schema, llm_hallucinated_formulas, llm_steps_do_not_cover,
    llm_malformed_response, llm_oversized_response, llm_refine_empty, llm_refine_lost_answer,
    llm_api_error, empty_solution

Calls run concurrently (`asyncio` + a semaphore of `concurrency`). Transport failures (408, 409,
429, 5xx, timeouts, connection errors) are retried by the `openai` SDK's own machinery
(`max_retries`, exponential backoff with jitter, `Retry-After` honoured up to two minutes); every
retry is counted in `stats["transport_retries"]`. Each request asks for at most `max_tokens`, and a
response body over `max_response_bytes` is refused unread (`llm_oversized_response`, counted in
`stats["oversized_responses"]`, not cached). Every answer is committed to a sqlite cache keyed by
endpoint, model, messages, parameters and attempt the moment it arrives, before its concurrency slot
is freed: a killed build loses at most the `concurrency` calls in flight, and a rerun sends no
request already answered. Authentication and unknown-model errors stop the run with `LLMError`
(every answer so far stays cached).

The API key is read from the environment (`OPENAI_API_KEY` by default) and travels only in the
`Authorization` header; it is never logged, cached or written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from tqdm.auto import tqdm

from mrtasks.curate.base import Annotator, Drop
from mrtasks.curate.cache import ResponseCache, default_cache_path, request_key
from mrtasks.curate.heuristic.candidates import formula_key
from mrtasks.curate.heuristic.context import BOOKKEEPING, role
from mrtasks.curate.heuristic.junk import NO_KEY_FORMULA, junk_reason
from mrtasks.curate.heuristic.ranking import copied_given, names_only
from mrtasks.curate.heuristic.spans import INLINE_MATH, math_spans, strip_span
from mrtasks.curate.validate import (
    STEPS_SCHEMA,
    THEOREMS_SCHEMA,
    Rejected,
    check_steps,
    compact,
    extract_json,
    locate_formulas,
    validate_schema,
)
from mrtasks.mathcheck import last_boxed
from mrtasks.prompts import (
    FORMULA_EXTRACTION_PROMPT,
    REFINE_PROMPT,
    STEP_SPLIT_PROMPT,
    Messages,
    curation_messages,
)
from mrtasks.tasks.masked_then_fill import restates_answer
from mrtasks.text import MATH_DELIMITERS, strip_math_delimiters, strip_think
from mrtasks.trajectory import Formula, Trajectory

logger = logging.getLogger(__name__)

T = TypeVar("T")

STATEMENT_WORDS = 7
"""A listed item in prose of this many words or more (`The closure of a connected set is connected`) is a statement, not
a formula or a result's name (`Taylor's theorem with remainder`): the heuristic never offers one."""
_WORD = re.compile(r"[A-Za-z]{2,}")
_CLAUSE = re.compile(
    r"^(?:we|it|this|these|they|there)\b|\b(?:is|are|was|were|be|has|have|had|holds?|follows?|proceeds?|shows?|proves?|"
    r"gets?|obtains?|implies|gives?|must|can|cannot)\b",
    re.IGNORECASE,
)
"""A clause, shorter than a statement but no name: a subject pronoun first or a finite verb (`the graph is bipartite`,
`We proceed by contradiction`, `each vertex has degree 4`); a name has neither (`proof by contrapositive`)."""
_LATEX = re.compile(r"[\\$^_={}]")
_DELIMITED = re.compile("|".join(f"{re.escape(o)}(.+?){re.escape(c)}" for o, c in MATH_DELIMITERS), re.DOTALL)
"""A formula set in math delimiters inside a listed item (its content is the group that matched)."""
_DELIMITER = re.compile("|".join(re.escape(d) for pair in MATH_DELIMITERS for d in pair))


def delimited_parts(item: str, solution: str) -> list[str]:
    """A listed item as the formulas it names: the item itself, or, when it carries a formula in prose that does not
    occur verbatim (`Common ratio: $\\frac{54}{36}=\\frac{3}{2}$`, `$76-40=36$, $130-76=54$`), each formula it sets in
    math delimiters. An item found verbatim is cut where it leaves the solution's math afterwards (`math_parts`)."""
    text = strip_math_delimiters(item)
    if not _DELIMITER.search(text) or compact(text) in compact(solution):
        return [item]
    parts = [next(g for g in m.groups() if g is not None) for m in _DELIMITED.finditer(item)]
    return [p for p in parts if p.strip()] or [item]


def math_parts(solution: str, formula: Formula) -> list[Formula]:
    """A located item that runs across the solution's math delimiters (`a^2=e$ or $a^2=b`, `the area is equal to
    $\\frac{1}{2} a b$`) as its pieces inside the math, less lone symbols and names: the prose between them is no
    formula, and a mask across a delimiter would garble the row. An item with no delimiter in it (inside one formula,
    in prose only, the rows of a display environment), or over a formula the source broke across `$ $` at a line end,
    stays whole."""
    if not _DELIMITER.search(formula.text):
        return [formula]
    spans = [s for s in math_spans(solution)[0] if s.outer_start < formula.end and formula.start < s.outer_end]
    if not spans or (len(spans) == 1 and spans[0].start <= formula.start and formula.end <= spans[0].end):
        return [formula]
    if len(spans) > 1 and all(not solution[a.end : b.start].replace("$", "").strip() for a, b in zip(spans, spans[1:])):
        return [formula]  # `(z-$ $\left.\lambda_j\right)`: one formula the line break split
    pieces = []
    for s in spans:
        a, b = strip_span(solution, max(formula.start, s.start), min(formula.end, s.end))
        if a < b and not names_only(solution[a:b]):  # `$\mathcal{B}$ is a basis`: a symbol is no formula the model named
            pieces.append(Formula(solution[a:b], a, b))
    return pieces


def lone_name(text: str) -> bool:
    """A symbol, a list of symbols or the name of a figure object written in LaTeX (`\\mathcal{F}_{n-1}`, `f_{n-1}`,
    `\\overline{AC}`): it names something and has nothing to fill in (`ranking.names_only`). A result's name in words
    (`quadratic formula`) is no symbol."""
    return bool(_LATEX.search(text)) and names_only(text)


def prose_statement(solution: str, formula: Formula) -> bool:
    """The formula is a sentence of prose (`STATEMENT_WORDS` or more words outside any math, no `=`) or a clause in words
    alone (`_CLAUSE`), standing outside the solution's math."""
    prose = INLINE_MATH.sub(" ", formula.text)
    clause = not _LATEX.search(formula.text) and bool(_CLAUSE.search(formula.text.strip()))
    if not clause and ("=" in prose or sum(1 for w in prose.split() if _WORD.search(w)) < STATEMENT_WORDS):
        return False
    spans, _ = math_spans(solution)
    return not any(s.outer_start <= formula.start and formula.end <= s.outer_end for s in spans)

RETRY_NOTE = "\n\nNote: your previous answer was rejected ({detail}). Follow the requirements exactly."
"""Appended to the user message on a retry: the model learns why, and the request (and its cache
key) differs from the rejected one."""


class LLMError(RuntimeError):
    """A configuration problem that no retry can fix (bad key, unknown model or endpoint)."""


class _CallFailed(Exception):
    """The endpoint did not answer after all transport retries (not cached; a rerun tries again)."""


@dataclass(frozen=True)
class LLMConfig:
    """Where to send curation requests and how hard to try. CLI: `--base-url`, `--model`, ..."""

    model: str = ""
    """Model name as the endpoint knows it (the paper: DeepSeek-R1-0528 to annotate, o3-mini to refine). Required."""
    base_url: str | None = None
    """OpenAI-compatible endpoint, e.g. `http://localhost:8000/v1` for vLLM; None: `OPENAI_BASE_URL` or OpenAI."""
    concurrency: int = 8
    """Requests in flight at once."""
    cache_path: str | Path | None = None
    """sqlite file of answers; None keeps them in memory for this run only."""
    refine: bool = False
    """Run the refine pass in `refine()`; when False it returns the trajectories unchanged."""
    refine_model: str | None = None
    """Model for the refine pass; None uses `model`."""
    refine_kinds: tuple[str, ...] = ("computation",)
    """Trajectory kinds the refine pass rewrites (the paper refines the DeepMath computations only)."""
    refine_check_answer: bool = True
    """Reject a rewrite that drops the reference answer the original solution states (up to whitespace)."""
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    """None leaves the endpoint's default."""
    max_tokens: int | None = 32_768
    """Completion tokens asked for at most (an R1 answer with its reasoning fits); None: the endpoint's default."""
    max_response_bytes: int = 4 * 2**20
    """Response bodies larger than this are refused unread (`llm_oversized_response`)."""
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Extra request fields for the endpoint (part of the cache key)."""
    timeout: float = 600.0
    """Seconds per request (one try); R1-style models think for minutes, and a timed-out call is paid for."""
    connect_timeout: float = 10.0
    """Seconds to open a connection: an endpoint that is down fails fast."""
    max_retries: int = 2
    """Transport retries per request by the openai SDK (408/409/429/5xx, timeouts, connection errors).
    A hung endpoint costs at most `timeout * (max_retries + 1)` per request."""
    max_attempts: int = 3
    """Answers asked for per prompt and trajectory before a rejected one becomes a Drop."""
    allow_repeated_formulas: bool = False
    """Keep formulas that occur more than once in the solution (masking one copy leaks it)."""
    drop_bookkeeping: bool = True
    """Leave out a listed formula that is bookkeeping by its shape or too little to restore (a whole table or
    system, an index range, a reference label: `heuristic.junk.NO_KEY_FORMULA`; a lone symbol: `lone_name`), a statement in prose
    (`prose_statement`), bookkeeping where it stands (a case label or hypothesis, a definition that only names
    something, a table cell: `heuristic.context.role`) or a given copied from the problem
    (`heuristic.ranking.copied_given`: filled by copying, not reasoning), as the heuristic never offers one. The
    paper's prompt does not ask the model to; False keeps the model's list as it is."""
    min_formulas: int = 7
    """When hallucinated formulas were removed and fewer than this remain, ask again (the paper keeps >= 7)."""
    min_step_coverage: float = 0.9
    """Fraction of the solution's non-whitespace characters the steps must cover."""
    min_step_similarity: float = 90.0
    """rapidfuzz partial-ratio a step needs to count as found when it is not verbatim."""
    progress: bool = True

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("the llm annotator needs a model name (--model), as the endpoint serves it")
        if self.concurrency < 1 or self.max_attempts < 1 or self.max_retries < 0:
            raise ValueError("concurrency and max_attempts must be >= 1, max_retries >= 0")
        if not (0 < self.timeout < math.inf and 0 < self.connect_timeout < math.inf):  # NaN fails too
            raise ValueError("timeout and connect_timeout must be finite numbers of seconds > 0")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1 (or None for the endpoint's default)")
        if self.max_response_bytes < 1024:
            raise ValueError("max_response_bytes must be >= 1024")
        if not 0.0 <= self.min_step_coverage <= 1.0:
            raise ValueError("min_step_coverage must be in [0, 1]")

    @property
    def endpoint(self) -> str:
        """The base URL requests go to (part of the cache key)."""
        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        return url.rstrip("/")


def add_endpoint_arguments(group: Any) -> None:
    """The endpoint options of the CLIs that run the llm annotator (`python -m mrtasks.build`,
    `python -m mrtasks.curate.annotator_bench`), on an argparse parser or group; `llm_config_from_args`
    reads them back."""
    group.add_argument("--base-url", help="llm: OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    group.add_argument("--model", help="llm: model name at the endpoint")
    group.add_argument("--concurrency", type=int, default=8, help="llm: requests in flight (default: 8)")
    group.add_argument(
        "--cache", help="llm: sqlite cache of answers (default: $XDG_CACHE_HOME or ~/.cache, then mrtasks/llm-cache.sqlite)"
    )
    group.add_argument("--no-cache", action="store_true", help="llm: keep answers in memory only (a rerun pays again)")
    group.add_argument("--timeout", type=float, default=600.0, help="llm: seconds per request try (default: 600)")
    group.add_argument(
        "--max-retries", type=int, default=2, help="llm: SDK retries on 429/5xx/timeouts/connection errors (default: 2)"
    )
    group.add_argument(
        "--max-tokens", type=int, default=32_768, help="llm: completion tokens per request; 0: the endpoint's default (default: 32768)"
    )
    group.add_argument(
        "--keep-bookkeeping", action="store_true",
        help="llm: keep listed formulas that are bookkeeping (whole tables, index ranges, reference labels, case "
             "labels, definitions that only name something, table cells), too little to restore (lone symbols too), "
             "statements in prose, "
             "or givens copied from the problem; by default they are left out, as the heuristic does",
    )


def llm_config_from_args(args: Any, **fields: Any) -> LLMConfig:
    """The `LLMConfig` of the options `add_endpoint_arguments` defined (`--cache` defaults to
    `default_cache_path()`, `--no-cache` keeps answers in memory, `--max-tokens 0` leaves the
    endpoint's default), plus `fields` (`refine`, `min_formulas`, `progress`, ...). A missing
    `--model` or a bad value is a ValueError whose text is the CLI's one-line usage error."""
    if not args.model:
        raise ValueError("--annotator llm needs --model (and usually --base-url)")
    kwargs: dict[str, Any] = {
        "model": args.model, "concurrency": args.concurrency, "timeout": args.timeout,
        "max_retries": args.max_retries, "max_tokens": args.max_tokens or None,
        "drop_bookkeeping": not args.keep_bookkeeping, **fields,
    }
    cache = None if args.no_cache else (args.cache or str(default_cache_path()))
    for key, value in (("base_url", args.base_url), ("cache_path", cache)):
        if value is not None:
            kwargs[key] = value
    try:
        return LLMConfig(**kwargs)
    except ValueError as e:
        raise ValueError(f"bad llm option: {e}") from None


@functools.lru_cache(maxsize=1)
def _transport_classes() -> tuple[type[Exception], type[Any]]:
    """`ResponseTooLarge` and the guarding transport, built on the SDK's HTTP library (lazily: the `llm` extra)."""
    import openai

    try:
        import httpx2 as httpx  # the HTTP library of openai >= 3
    except ImportError:  # pragma: no cover - openai 1.x/2.x
        import httpx  # type: ignore[no-redef]

    class ResponseTooLarge(openai.OpenAIError):
        """A response body over the cap. An OpenAIError, so the SDK raises it as is and does not retry."""

    class CappedStream(httpx.AsyncByteStream):
        def __init__(self, inner: Any, limit: int) -> None:
            self.inner, self.limit = inner, limit

        async def __aiter__(self) -> Any:
            size = 0
            async for chunk in self.inner:
                size += len(chunk)
                if size > self.limit:
                    raise ResponseTooLarge(f"response body over {self.limit} bytes")
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class GuardedTransport(httpx.AsyncBaseTransport):
        """Counts the SDK's retries (its `x-stainless-retry-count` header) and caps response bodies."""

        def __init__(self, limit: int, on_retry: Callable[[], None]) -> None:
            self.inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100))
            self.limit, self.on_retry = limit, on_retry

        async def handle_async_request(self, request: Any) -> Any:
            if request.headers.get("x-stainless-retry-count", "0") not in ("", "0"):
                self.on_retry()
            response = await self.inner.handle_async_request(request)
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > self.limit:
                await response.aclose()
                raise ResponseTooLarge(f"response body of {length} bytes, over the {self.limit}-byte cap")
            response.stream = CappedStream(response.stream, self.limit)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return ResponseTooLarge, GuardedTransport


def _run_sync(make_coro: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine from synchronous code, even when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make_coro())).result()  # type: ignore[arg-type]


class LLMAnnotator(Annotator):
    """Annotates (and optionally refines) trajectories through an OpenAI-compatible chat endpoint."""

    name = "llm"

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.cache = ResponseCache(config.cache_path)
        self.stats: Counter[str] = Counter()
        """requests, cache_hits, transport_retries (by the SDK), oversized_responses, retried_answers,
        formulas_removed (not in the solution), formulas_repeated (occur twice), formulas_from_prose (formulas read
        from items in prose, `delimited_parts`), formulas_cut_to_math (items cut to their math, `math_parts`),
        formulas_lone_answer (the final answer as a lone value, `masked_then_fill.restates_answer`),
        formulas_bookkeeping (`drop_bookkeeping`), drop:<reason>."""
        self._client: Any = None
        self._semaphore: asyncio.Semaphore | None = None
        self._inflight: dict[str, asyncio.Future[str]] = {}

    # --- public, synchronous API -----------------------------------------------------------

    def annotate(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        return self._run_all(trajectories, self._annotate_one, "llm annotate")

    def refine(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        if not self.config.refine:
            return list(trajectories)
        return self._run_all(trajectories, self._refine_one, "llm refine")

    def close(self) -> None:
        self.cache.close()

    def __enter__(self) -> LLMAnnotator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- orchestration ---------------------------------------------------------------------

    def _run_all(
        self,
        trajectories: list[Trajectory],
        one: Callable[[Trajectory], Awaitable[Trajectory | Drop]],
        desc: str,
    ) -> list[Trajectory | Drop]:
        if not trajectories:
            return []
        before = self.stats.copy()
        results = _run_sync(lambda: self._gather(trajectories, one, desc))
        delta = self.stats - before
        logger.info(
            "%s: %d trajectories, %d requests, %d cache hits, %d dropped %s",
            desc,
            len(trajectories),
            delta["requests"],
            delta["cache_hits"],
            sum(isinstance(r, Drop) for r in results),
            dict(Counter(r.reason for r in results if isinstance(r, Drop))),
        )
        return results

    async def _gather(
        self,
        trajectories: list[Trajectory],
        one: Callable[[Trajectory], Awaitable[Trajectory | Drop]],
        desc: str,
    ) -> list[Trajectory | Drop]:
        import openai  # the `llm` extra; imported here so `mrtasks` imports without it

        cfg = self.config
        _, transport = _transport_classes()
        timeout = openai.Timeout(cfg.timeout, connect=min(cfg.connect_timeout, cfg.timeout))
        api_key = os.environ.get(cfg.api_key_env) or "EMPTY"  # local servers need none
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=cfg.endpoint, max_retries=cfg.max_retries, timeout=timeout,
            http_client=openai.DefaultAsyncHttpxClient(
                timeout=timeout, transport=transport(cfg.max_response_bytes, self._count_retry)
            ),
        )
        self._semaphore = asyncio.Semaphore(self.config.concurrency)
        self._inflight = {}
        bar = tqdm(total=len(trajectories), desc=desc, unit="traj", disable=not self.config.progress)

        async def tracked(t: Trajectory) -> Trajectory | Drop:
            result = await one(t)
            if isinstance(result, Drop):
                self.stats[f"drop:{result.reason}"] += 1
                if self.stats[f"drop:{result.reason}"] == 1:  # the first of each reason, with its detail
                    logger.warning("%s: %s dropped (%s): %s", desc, t.id, result.reason, result.detail)
            bar.update(1)
            return result

        tasks = [asyncio.ensure_future(tracked(t)) for t in trajectories]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()
            bar.close()
            await self._client.close()
            self._client = None

    def _count_retry(self) -> None:
        self.stats["transport_retries"] += 1

    # --- one trajectory --------------------------------------------------------------------

    async def _annotate_one(self, t: Trajectory) -> Trajectory | Drop:
        if not t.solution.strip():
            return Drop(t.id, "empty_solution")
        formulas, steps = await asyncio.gather(
            self._ask(t, FORMULA_EXTRACTION_PROMPT, self._parse_formulas, "formulas"),
            self._ask(t, STEP_SPLIT_PROMPT, self._parse_steps, "steps"),
        )
        if isinstance(formulas, Drop):
            return formulas
        if isinstance(steps, Drop):
            return steps
        return replace(t, formulas=formulas, steps=steps)

    async def _refine_one(self, t: Trajectory) -> Trajectory | Drop:
        if t.kind not in self.config.refine_kinds:
            return t
        model = self.config.refine_model or self.config.model
        refined = await self._ask(t, REFINE_PROMPT, self._parse_refined, "refine", model=model)
        if isinstance(refined, Drop):
            return refined
        return replace(t, solution=refined, formulas=[], steps=[])

    async def _ask(
        self,
        t: Trajectory,
        prompt: str,
        parse: Callable[[str, Trajectory], T],
        kind: str,
        model: str | None = None,
    ) -> T | Drop:
        """Ask, check, and ask again with the reason until an answer passes or attempts run out."""
        model = model or self.config.model
        rejected: Rejected | None = None
        for attempt in range(self.config.max_attempts):
            messages = curation_messages(prompt, t.solution)
            if rejected is not None:
                self.stats["retried_answers"] += 1
                messages[-1]["content"] += RETRY_NOTE.format(detail=rejected.detail or rejected.reason)
            try:
                text = await self._complete(model, messages, attempt, kind)
                return parse(text, t)
            except Rejected as r:
                rejected = r
                logger.debug("%s %s attempt %d rejected: %s", t.id, kind, attempt, r)
            except _CallFailed as e:
                return Drop(t.id, "llm_api_error", str(e))
        assert rejected is not None
        return Drop(t.id, rejected.reason, f"{kind}: {rejected.detail}")

    # --- answer checks ---------------------------------------------------------------------

    def _parse_formulas(self, text: str, t: Trajectory) -> list[Formula]:
        obj = extract_json(text)
        validate_schema(obj, THEOREMS_SCHEMA)
        read = [delimited_parts(item, t.solution) for item in obj["theorems"]]
        items = [part for parts in read for part in parts]
        match = locate_formulas(t.solution, items, self.config.allow_repeated_formulas)
        if match.missing and len(match.formulas) < self.config.min_formulas:
            shown = "; ".join(repr(m[:60]) for m in match.missing[:3])
            raise Rejected(
                "llm_hallucinated_formulas",
                f"{len(match.missing)} of {len(items)} items do not occur verbatim in the text: {shown}",
            )
        self.stats["formulas_removed"] += len(match.missing)
        self.stats["formulas_repeated"] += match.repeated
        self.stats["formulas_from_prose"] += sum(parts != [item] for item, parts in zip(obj["theorems"], read))
        formulas = [part for f in match.formulas for part in math_parts(t.solution, f)]
        self.stats["formulas_cut_to_math"] += sum(f not in formulas for f in match.formulas)
        return self._key_formulas(formulas, t)

    def _key_formulas(self, formulas: list[Formula], t: Trajectory) -> list[Formula]:
        """The model's formulas less what is no key formula: the final answer as a lone value (the tasks mask or
        edit it themselves) and, with `drop_bookkeeping`, what the heuristic never offers (bookkeeping by its
        shape or where it stands, a statement in prose, a given copied from the problem)."""
        final = last_boxed(t.solution)  # once per trajectory, not per formula
        kept = [f for f in formulas if not restates_answer(f.text, final)]
        self.stats["formulas_lone_answer"] += len(formulas) - len(kept)
        if not self.config.drop_bookkeeping:
            return kept
        problem = t.problem or ""
        given = formula_key(problem)
        key = [f for f in kept if junk_reason(f.text) not in NO_KEY_FORMULA and not prose_statement(t.solution, f)
               and not lone_name(f.text) and role(t.solution, f.start, f.end, problem) not in BOOKKEEPING
               and not copied_given(formula_key(f.text), given)]
        self.stats["formulas_bookkeeping"] += len(kept) - len(key)
        return key

    def _parse_steps(self, text: str, t: Trajectory) -> list[str]:
        obj = extract_json(text)
        validate_schema(obj, STEPS_SCHEMA)
        cfg = self.config
        return check_steps(t.solution, obj["steps"], cfg.min_step_coverage, cfg.min_step_similarity).steps

    def _parse_refined(self, text: str, t: Trajectory) -> str:
        out = strip_think(text).strip()
        if out.startswith("```") and out.endswith("```"):
            out = out.split("\n", 1)[-1][:-3].strip() if "\n" in out else ""
        if not out:
            raise Rejected("llm_refine_empty", "the rewritten solution is empty")
        if self.config.refine_check_answer and t.answer:
            answer = compact(strip_math_delimiters(t.answer))
            # Only an answer the original states verbatim can be required of the rewrite.
            if answer and answer in compact(t.solution) and answer not in compact(out):
                raise Rejected("llm_refine_lost_answer", f"keep the final answer {t.answer!r} unchanged")
        return out

    # --- one request: cache, then the endpoint with retries --------------------------------

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = dict(self.config.extra_body)
        if self.config.temperature is not None:
            params["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens
        return params

    async def _complete(self, model: str, messages: Messages, attempt: int, kind: str) -> str:
        """The answer text, from the cache or the endpoint; identical concurrent requests share one call."""
        params = self._params()
        key = request_key(model, messages, params, attempt, endpoint=self.config.endpoint)
        cached = self.cache.get(key)
        if cached is not None:
            self.stats["cache_hits"] += 1
            return cached
        if key in self._inflight:
            self.stats["cache_hits"] += 1
            return await asyncio.shield(self._inflight[key])
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            text = await self._request(model, messages, params, key, kind)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # marks it retrieved; waiters, if any, get it raised again
            raise
        finally:
            self._inflight.pop(key, None)
        future.set_result(text)
        return text

    async def _request(self, model: str, messages: Messages, params: dict[str, Any], key: str, kind: str) -> str:
        """One call through the SDK (which retries transport failures); the answer is cached before the slot frees."""
        import openai

        too_large, _ = _transport_classes()
        cfg = self.config
        assert self._semaphore is not None and self._client is not None
        try:
            async with self._semaphore:
                self.stats["requests"] += 1
                response = await self._client.chat.completions.create(
                    model=model, messages=messages, extra_body=params or None
                )
                text = _content(response)
                # Committed before the slot is released: a killed run loses only calls in flight.
                self.cache.put(key, text, model=model, kind=kind)
                return text
        except too_large as e:
            self.stats["oversized_responses"] += 1
            raise Rejected("llm_oversized_response", f"{e}; answer within {cfg.max_tokens} tokens") from None
        except openai.APIStatusError as e:
            status = e.status_code
            if status in (401, 403):
                raise LLMError(f"the endpoint refused the API key (HTTP {status}); set ${cfg.api_key_env}") from None
            if status == 404:
                raise LLMError(f"model {model!r} or endpoint {cfg.endpoint!r} not found (HTTP 404)") from None
            raise _CallFailed(f"HTTP {status} after {cfg.max_retries + 1} tries at most: {_short(e)}") from None
        except (openai.APITimeoutError, openai.APIConnectionError) as e:
            raise _CallFailed(f"{type(e).__name__} after {cfg.max_retries + 1} tries: {_short(e)}") from None
        except openai.APIResponseValidationError as e:
            raise Rejected("llm_malformed_response", _short(e)) from None


def _short(e: BaseException) -> str:
    return str(e).replace("\n", " ")[:200]


def _content(response: Any) -> str:
    """The assistant text of a chat completion; a body in any other shape is `llm_malformed_response`."""
    try:
        message = response.choices[0].message
    except (AttributeError, IndexError, TypeError):
        raise Rejected("llm_malformed_response", f"no choices in {str(response)[:120]!r}") from None
    content = getattr(message, "content", None)
    if content is None:
        raise Rejected("llm_malformed_response", "the answer has no content")
    if not isinstance(content, str):
        raise Rejected("llm_malformed_response", f"content is {type(content).__name__}, not text")
    return content
