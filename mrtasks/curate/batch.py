"""The `llm` annotator through a batch API: export the requests it would send, import the answers.

Batch APIs (OpenAI's Batch API, or any offline answerer) take a JSON-lines file of chat requests and
return a file of answers, at a lower price and without a live endpoint. Here the requests are exactly
those `LLMAnnotator` would send, and the answers land in its sqlite cache, so the build (or the
annotator benchmark) then runs from the cache and sends nothing that was answered:

    python -m mrtasks.curate.batch export --source SPEC --model M --base-url URL --cache llm.sqlite --out requests.jsonl
    # submit requests.jsonl, download the batch's output file
    python -m mrtasks.curate.batch import requests.jsonl output.jsonl --cache llm.sqlite
    python -m mrtasks.build --source SPEC --annotator llm --model M --base-url URL --cache llm.sqlite ...

Each request's `custom_id` is `KIND-KEY`, KEY the annotator's cache key (endpoint, model, messages,
parameters, attempt), so an imported answer is checked as a live one would be. An answer the checks
reject makes the annotator ask again with a note saying why: export once more to get those retries as
the next batch. With `--refine` (the paper's rewrite pass, as the build's flag), the rewrites come first: the
requests to annotate a rewritten solution are exported once its rewrite is imported.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from mrtasks.curate.base import Drop
from mrtasks.curate.cache import ResponseCache
from mrtasks.curate.llm import LLMAnnotator, LLMConfig, _CallFailed
from mrtasks.jsonl import BadLine, iter_jsonl
from mrtasks.trajectory import Trajectory

logger = logging.getLogger(__name__)

BATCH_URL = "/v1/chat/completions"


def batch_request(custom_id: str, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
    """One line of an OpenAI Batch API input file."""
    return {"custom_id": custom_id, "method": "POST", "url": BATCH_URL,
            "body": {"model": model, "messages": messages, **params}}


class _Collector(LLMAnnotator):
    """The annotator with its transport replaced by a queue: every request the cache cannot answer is
    recorded (once) and fails, so each trajectory stops at its first unanswered request."""

    def __init__(self, config: LLMConfig) -> None:
        super().__init__(config)
        self.pending: dict[str, dict[str, Any]] = {}

    async def _request(self, model: str, messages: Any, params: dict[str, Any], key: str, kind: str) -> str:
        self.pending.setdefault(key, batch_request(f"{kind}-{key}", model, messages, params))
        raise _CallFailed("queued for the batch")


def pending_requests(trajectories: list[Trajectory], config: LLMConfig) -> tuple[list[dict[str, Any]], int]:
    """The batch input lines of every request `LLMAnnotator(config)` would send to refine (with `config.refine`)
    and annotate `trajectories` that `config`'s cache does not answer (first attempts, and the retry of every
    cached answer the checks reject), and how many trajectories are annotated from the cache alone. With
    `config.refine`, the requests to annotate a rewritten solution come once its rewrite is answered."""
    llm_logger = logging.getLogger(LLMAnnotator.__module__)
    level = llm_logger.level
    llm_logger.setLevel(logging.ERROR)  # every queued request is a "dropped" trajectory there
    try:
        with _Collector(replace(config, progress=False)) as collector:
            refined = collector.refine(trajectories)
            results = collector.annotate([r for r in refined if not isinstance(r, Drop)])
    finally:
        llm_logger.setLevel(level)
    settled = [r for r in refined if isinstance(r, Drop)] + results  # a rewrite refused for good is settled too
    return list(collector.pending.values()), sum(not isinstance(r, Drop) or r.reason != "llm_api_error" for r in settled)


def import_answers(requests: Path, results: Path, cache: ResponseCache | str | Path) -> tuple[int, Counter[str]]:
    """Store each answer of a batch output file whose `custom_id` names a request of `requests`; return
    how many were stored and the skipped lines by reason (`bad_line`: not a JSON object in UTF-8, or no
    `custom_id`; `unknown_custom_id`, `error`, `no_content`). A requests file that is not a batch input
    file is a ValueError naming its line. A cache given as a path is opened at the first answer to store
    (and closed at the end), so an import that stores nothing creates no file."""
    wanted: dict[str, dict[str, Any]] = {}
    for n, req in iter_jsonl(requests, errors="yield"):
        if isinstance(req, BadLine) or not isinstance(req.get("custom_id"), str) or not isinstance(req.get("body"), dict):
            raise ValueError(f"{requests}:{n}: not a batch request line (custom_id and body)")
        wanted[req["custom_id"]] = req["body"]
    stored, skipped = 0, Counter[str]()
    opened: ResponseCache | None = None
    try:
        for _, out in iter_jsonl(results, errors="yield"):
            custom_id = None if isinstance(out, BadLine) else out.get("custom_id")
            if not isinstance(out, dict) or not isinstance(custom_id, str):
                skipped["bad_line"] += 1
            elif custom_id not in wanted:
                skipped["unknown_custom_id"] += 1
            elif (content := _answer(out)) is None:
                skipped["error" if out.get("error") or _status(out) != 200 else "no_content"] += 1
            else:
                if not isinstance(cache, ResponseCache):
                    cache = opened = ResponseCache(cache)
                kind, _, key = custom_id.rpartition("-")
                cache.put(key, content, model=str(wanted[custom_id].get("model", "")), kind=kind)
                stored += 1
    finally:
        if opened is not None:
            opened.close()
    return stored, skipped


def _status(out: dict[str, Any]) -> Any:
    response = out.get("response")
    return response.get("status_code") if isinstance(response, dict) else None


def _answer(out: dict[str, Any]) -> str | None:
    """The assistant text of one batch output line, or None (an error, or a body in another shape)."""
    if out.get("error") or _status(out) != 200:
        return None
    try:
        content = out["response"]["body"]["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    return content if isinstance(content, str) else None


def _is_requests_file(path: Path) -> bool:
    """Was this file written by `export` (empty, or its first line a batch request to BATCH_URL)? Any other file is
    never overwritten."""
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
        if not first.strip():
            return True
        req = json.loads(first)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(req, dict) and req.get("url") == BATCH_URL and isinstance(req.get("body"), dict) \
        and isinstance(req.get("custom_id"), str)


def _trajectories(args: argparse.Namespace) -> list[Trajectory]:
    """The solutions to annotate: a fixture's rows (texts from --source or --corpora), else every
    trajectory the sources yield."""
    from mrtasks.curate.annotator_bench import load_fixture
    from mrtasks.curate.sources import expand_specs, iter_source, parse_source

    if args.fixture:
        by_id = {t.id: t for _, t in load_fixture(args.fixture, args.corpora, args.source)}
        return list(by_id.values())
    found: dict[str, Trajectory] = {}
    for spec in expand_specs([parse_source(s) for s in args.source]):
        for t in iter_source(spec):
            if not isinstance(t, Drop) and t.solution.strip():
                found.setdefault(t.id, t)
    return list(found.values())


def main(argv: list[str] | None = None) -> int:
    from mrtasks.curate.annotator_bench import DEFAULT_CORPORA
    from mrtasks.curate.cache import CacheError, default_cache_path
    from mrtasks.curate.llm import add_endpoint_arguments, llm_config_from_args
    from mrtasks.curate.sources import SourceError
    from mrtasks.logs import configure_logging, run_command
    from mrtasks.output import OutputError, check_output_file, write_output_file

    p = argparse.ArgumentParser(prog="python -m mrtasks.curate.batch", description=__doc__.splitlines()[0],
                                epilog="exit codes: 0 done; 2 bad arguments or unreadable input; 4 the output "
                                       "file cannot be written; 130 interrupted")
    sub = p.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write the requests the llm annotator would send as a batch input file",
                        description="Write the requests the llm annotator would send for these solutions (those its "
                                    "cache does not answer) as an OpenAI Batch API input file.")
    ex.add_argument("--source", action="append", default=[], metavar="SPEC",
                    help="a source, in the build's syntax (repeatable); every solution it yields is annotated "
                         "(a superset of a build's: the build's problem filters come later)")
    ex.add_argument("--fixture", type=Path, action="append",
                    help="annotate the rows of this annotator fixture instead (repeatable; texts from --source, "
                         "else --corpora), for `annotator_bench --annotator llm`")
    ex.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="corpora folder for --fixture texts")
    ex.add_argument("--refine", action="store_true",
                    help="as the build's --refine: the rewrite requests first, then the annotation of each rewrite")
    ex.add_argument("--min-formulas", type=int, default=7,
                    help="as the build's --min-formulas: fewer formulas found verbatim makes the annotator ask again")
    ex.add_argument("--out", required=True, help="the batch input file to write (JSON lines)")
    add_endpoint_arguments(ex.add_argument_group("the llm annotator's options, as the build will get them"))
    im = sub.add_parser("import", help="store a batch output file's answers in the llm annotator's cache",
                        description="Store the answers of a batch output file in the llm annotator's cache.")
    im.add_argument("requests", type=Path, help="the batch input file `export` wrote")
    im.add_argument("results", type=Path, help="the batch output file (JSON lines: custom_id, response, error)")
    im.add_argument("--cache", help="sqlite cache (default: $XDG_CACHE_HOME or ~/.cache, then mrtasks/llm-cache.sqlite)")
    args = p.parse_args(argv)
    configure_logging()

    def export() -> int:
        if not args.source and not args.fixture:
            p.error("export needs --source or --fixture")
        try:
            config = llm_config_from_args(args, refine=args.refine, min_formulas=args.min_formulas, progress=False)
        except ValueError as e:
            p.error(str(e))
        check_output_file("--out", args.out, "mrtasks.curate.batch export", ours=_is_requests_file)
        trajectories = _trajectories(args)
        lines, done = pending_requests(trajectories, config)
        write_output_file("--out", args.out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines))
        kinds = Counter(r["custom_id"].rpartition("-")[0] for r in lines)
        print(f"{len(lines)} requests ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items())) or 'none'}) for "
              f"{len(trajectories)} solutions, {done} of them answered from {config.cache_path or 'memory'} -> {args.out}")
        return 0

    def import_() -> int:
        for path in (args.requests, args.results):
            if not path.is_file():
                p.error(f"{path}: no such file")
        stored, skipped = import_answers(args.requests, args.results, args.cache or default_cache_path())
        why = ", ".join(f"{k} {n}" for k, n in sorted(skipped.items()))
        print(f"imported {stored} answers into {args.cache or default_cache_path()}" + (f"; skipped {why}" if why else ""))
        if not stored and skipped:
            print(f"error: no line of {args.results} answers a request of {args.requests}", file=sys.stderr)
            return 2
        return 0

    body = export if args.command == "export" else import_
    return run_command(body, {OutputError: 4, CacheError: 2, SourceError: 2, ValueError: 2, OSError: 2})


if __name__ == "__main__":
    raise SystemExit(main())
