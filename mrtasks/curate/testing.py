"""A local OpenAI-compatible chat server for tests, benchmarks and offline dry runs of the `llm` path.

Stdlib only. It serves `POST /v1/chat/completions` in the OpenAI response shape; what it answers
is scripted by a *responder*, a function from the request body to a `Reply` (or a plain string,
the assistant's content). The default responder, `oracle_reply`, answers the curation prompts
correctly from the solution text itself. Every request is logged, with whether its answer was
delivered, so a test can count calls and catch repeated ones.

    with FakeOpenAIServer(latency=0.2) as server:
        annotator = LLMAnnotator(LLMConfig(base_url=server.base_url, model="fake"))
        ...
        assert len(server.completed()) == 2 * n
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mrtasks.prompts import FORMULA_EXTRACTION_PROMPT, REFINE_PROMPT, STEP_SPLIT_PROMPT


@dataclass
class Reply:
    """One scripted answer. By default a 200 chat completion whose message content is `content`."""

    content: str | None = None
    status: int = 200
    body: str | None = None
    """A raw body sent instead of the OpenAI shape (malformed responses, error payloads)."""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Extra seconds to wait before answering, on top of the server's latency."""
    hang: bool = False
    """Never answer (until the server stops): a stuck upstream, or a build killed mid-call."""
    chunked: bool = False
    """Send the body with `Transfer-Encoding: chunked` (no Content-Length), in 1 KiB chunks."""


Responder = Callable[[dict[str, Any]], "Reply | str"]


@dataclass
class LoggedRequest:
    body: dict[str, Any]
    started: float
    headers: dict[str, str] = field(default_factory=dict)
    """The request's HTTP headers (to check where the API key travels)."""
    status: int | None = None
    completed: bool = False
    """True once the full answer was written to the client."""

    @property
    def kind(self) -> str:
        return request_kind(self.body)

    @property
    def key(self) -> str:
        """Identifies identical requests (same model and messages), to detect repeated calls."""
        blob = json.dumps([self.body.get("model"), self.body.get("messages")], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def request_kind(body: dict[str, Any]) -> str:
    """`formulas`, `steps`, `refine` or `other`, from the request's system prompt."""
    messages = body.get("messages") or []
    system = messages[0].get("content") if messages and isinstance(messages[0], dict) else None
    return {FORMULA_EXTRACTION_PROMPT: "formulas", STEP_SPLIT_PROMPT: "steps", REFINE_PROMPT: "refine"}.get(
        system, "other"
    )


def request_solution(body: dict[str, Any]) -> str:
    """The solution text a curation request is about (see `mrtasks.prompts.curation_messages`)."""
    user = next((m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"), "")
    text = user.split("Original answer text:\n", 1)[-1]
    return text.split("\n\nNote: your previous answer was rejected", 1)[0]


_MATH_RE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.DOTALL)


def oracle_formulas(solution: str) -> list[str]:
    """The solution's math spans, longest first (a stand-in for importance), without duplicates."""
    spans = [next(g for g in m.groups() if g is not None).strip() for m in _MATH_RE.finditer(solution)]
    unique = list(dict.fromkeys(s for s in spans if s))
    return sorted(unique, key=len, reverse=True)


def oracle_steps(solution: str) -> list[str]:
    """Paragraphs; a single paragraph is split into sentences."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", solution) if p.strip()]
    if len(paragraphs) > 1:
        return paragraphs
    return [s for s in re.split(r"(?<=[.!?])\s+", solution.strip()) if s]


def oracle_reply(body: dict[str, Any]) -> str:
    """A correct answer to any curation request, as a well-behaved model would give it."""
    kind, solution = request_kind(body), request_solution(body)
    if kind == "formulas":
        return json.dumps({"theorems": oracle_formulas(solution)})
    if kind == "steps":
        return json.dumps({"steps": oracle_steps(solution)})
    if kind == "refine":
        kept = [line for line in solution.splitlines() if not line.lstrip().lower().startswith("wait")]
        return "\n".join(kept)
    return "OK"


def completion_body(content: str | None, model: str, n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _wait_seconds(*parts: float) -> float:
    """The seconds to wait before answering: the sum of `parts`, 0 when it is not a positive number
    (NaN included), at most `threading.TIMEOUT_MAX` (a longer or infinite wait overflows
    `Event.wait`; the clamped one still lasts until the server stops)."""
    try:
        total = float(sum(parts))
    except (TypeError, ValueError, OverflowError):
        return 0.0
    if not total > 0:  # NaN, zero or negative
        return 0.0
    return min(total, threading.TIMEOUT_MAX)


class _ThreadingServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog; the default 5 resets bursts of connections

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a cancelled or killed annotator) is normal here, not a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    """Threaded HTTP server on 127.0.0.1 (a free port); use as a context manager or start()/stop().

    `latency` (seconds added to every answer) must be a finite number >= 0, else ValueError; a
    scripted `Reply.delay` that is not a positive number waits nothing, and any wait is clamped to
    `threading.TIMEOUT_MAX`, so no handler thread can fail on it."""

    def __init__(self, responder: Responder = oracle_reply, latency: float = 0.0, port: int = 0) -> None:
        if not (isinstance(latency, (int, float)) and math.isfinite(latency) and latency >= 0):
            raise ValueError(f"latency must be a finite number of seconds >= 0, got {latency!r}")
        self.responder = responder
        self.latency = latency
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _ThreadingServer(("127.0.0.1", port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def completed(self, kind: str | None = None) -> list[LoggedRequest]:
        """Requests whose answer was delivered (optionally of one kind)."""
        with self._lock:
            return [r for r in self.log if r.completed and (kind is None or r.kind == kind)]

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms stall

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: str, headers: dict[str, str], chunked: bool = False) -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if chunked:
                    for k in range(0, len(data), 1024):
                        piece = data[k : k + 1024]
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.wfile.write(data)
                self.wfile.flush()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}), {})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, json.dumps({"error": {"message": "invalid JSON body"}}), {})
                    return
                entry = LoggedRequest(body=body, started=time.monotonic(), headers=dict(self.headers.items()))
                with server._lock:
                    server.log.append(entry)
                    n = len(server.log)
                try:
                    reply = server.responder(body)
                except Exception as e:  # noqa: BLE001 - a broken script is a 500, as a broken upstream would be
                    reply = Reply(status=500, body=json.dumps({"error": {"message": repr(e)}}))
                if isinstance(reply, str):
                    reply = Reply(content=reply)
                if reply.hang:
                    server._stopping.wait()
                    return
                wait = _wait_seconds(server.latency, reply.delay)
                if wait > 0 and server._stopping.wait(wait):
                    return
                if reply.body is not None:
                    text = reply.body
                elif reply.status == 200:
                    text = json.dumps(completion_body(reply.content, str(body.get("model")), n))
                else:
                    text = json.dumps({"error": {"message": f"scripted error {reply.status}"}})
                try:
                    self._send(reply.status, text, dict(reply.headers), reply.chunked)
                except OSError:  # the client went away
                    return
                with server._lock:
                    entry.status, entry.completed = reply.status, True

        return Handler


# --- a local Hub endpoint for `--push-to-hub` (HF_ENDPOINT=server.url) -----------------------------


@dataclass
class HubRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0


class FakeHubServer:
    """The few Hub API routes `HfApi.whoami`, `create_repo` and `upload_folder` use, on 127.0.0.1.

    Routes (huggingface_hub 0.2x-2.x): `GET /api/whoami-v2`, `POST /api/repos/create`,
    `POST /api/validate-yaml` (the single-commit path without hf_xet),
    `POST /api/<type>s/<repo>/preupload/<rev>` (every file answered `regular`, so contents travel
    base64 in the commit and no LFS/Xet storage is involved) and `POST /api/<type>s/<repo>/commit/<rev>`
    (NDJSON). Files committed land in `repos[repo_id][path] = bytes`. Requests carrying a token other
    than `token` get 401; `fail_commit` answers the commit with that status. Anything else is 404 and
    stays in `log` for the test to see.
    """

    def __init__(self, token: str, fail_commit: int | None = None) -> None:
        self.token = token
        self.fail_commit = fail_commit
        self.log: list[HubRequest] = []
        self.repos: dict[str, dict[str, bytes]] = {}
        self._lock = threading.Lock()
        self._httpd = _ThreadingServer(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeHubServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _route(self, req: HubRequest) -> tuple[int, Any]:
        import base64

        auth = {k.lower(): v for k, v in req.headers.items()}.get("authorization", "")
        if auth != f"Bearer {self.token}":
            return 401, {"error": "Invalid credentials in Authorization header"}
        path = req.path.split("?", 1)[0]
        if req.method == "GET" and path == "/api/whoami-v2":
            return 200, {"type": "user", "name": "tester", "auth": {"accessToken": {"role": "write"}}}
        if req.method == "POST" and path == "/api/validate-yaml":  # create_commit checks the card's metadata
            import yaml

            content = json.loads(req.body).get("content", "")
            try:
                yaml.safe_load(content.split("---")[1] if content.startswith("---") else "")
            except (yaml.YAMLError, IndexError) as e:
                return 400, {"errors": [{"message": str(e)}], "warnings": []}
            return 200, {"errors": [], "warnings": []}
        if req.method == "POST" and path == "/api/repos/create":
            info = json.loads(req.body)
            repo = f"{info.get('organization')}/{info['name']}" if info.get("organization") else info["name"]
            with self._lock:
                exists = repo in self.repos
                self.repos.setdefault(repo, {})
            if exists:
                return 409, {"error": "You already created this dataset repo", "url": f"{self.url}/datasets/{repo}"}
            return 200, {"url": f"{self.url}/datasets/{repo}", "name": repo}
        m = re.fullmatch(r"/api/(model|dataset|space)s/(.+)/(preupload|commit)/([^/]+)", path)
        if req.method == "POST" and m:
            repo, action = m.group(2), m.group(3)
            if repo not in self.repos:
                return 404, {"error": "Repository not found"}
            if action == "preupload":
                files = json.loads(req.body)["files"]
                return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]}
            if self.fail_commit:
                return self.fail_commit, {"error": "scripted commit failure"}
            for line in req.body.splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    value = item["value"]
                    with self._lock:
                        self.repos[repo][value["path"]] = base64.b64decode(value["content"])
            oid = hashlib.sha1(req.body).hexdigest()
            return 200, {"commitUrl": f"{self.url}/datasets/{repo}/commit/{oid}", "commitOid": oid, "pullRequestUrl": None}
        return 404, {"error": f"no route {req.method} {path}"}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                req = HubRequest(self.command, self.path, dict(self.headers.items()), body)
                status, payload = server._route(req)
                req.status = status
                with server._lock:
                    server.log.append(req)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status >= 400:
                    self.send_header("X-Error-Message", str(payload.get("error", "")))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_HEAD = _handle

        return Handler
