"""The settings of one evaluation run; defaults are the paper's (Experimental Setup)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from eval.benchmarks import DEFAULT_BENCHMARKS
from mrtasks.mathcheck import OFFLINE_TIMEOUT_S

PROMPT_STYLES = ("paper", "chat-template")

# Settings that change what gets generated: a resumed run must match them exactly. The
# transformers backend seeds one generate() call per group of prompts, so the grouping
# (problems_per_call, batch_size) changes the samples too.
GENERATION_KEYS = (
    "model", "revision", "tokenizer", "backend", "n", "temperature", "top_p", "top_k", "max_new_tokens", "seed",
    "prompt_style", "stop_tokens", "problems_per_call", "batch_size",
)
# A grader timeout generous enough that a slow-but-correct answer on a busy node still counts
# (training keeps the reward pool's tight default: 8192 completions per step).
EVAL_GRADER_TIMEOUT_S = OFFLINE_TIMEOUT_S


@dataclass
class EvalConfig:
    model: str
    output_dir: str
    revision: str | None = None
    tokenizer: str | None = None
    backend: str = "auto"
    benchmarks: list[str] = field(default_factory=lambda: list(DEFAULT_BENCHMARKS))
    benchmark_dir: str | None = None
    hub_revisions: dict[str, str] = field(default_factory=dict)
    max_problems: int | None = None
    n: int = 64
    k: list[int] = field(default_factory=lambda: [1, 5, 8])
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = 0  # 0: no top-k filtering, on both backends (the paper reports none)
    max_new_tokens: int = 4096
    seed: int = 0
    prompt_style: str = "paper"
    stop_tokens: list[str] | None = None  # None: the model's eos plus the end-of-turn tokens it knows
    grader_timeout: float = EVAL_GRADER_TIMEOUT_S
    problems_per_call: int = 16
    batch_size: int = 64
    dtype: str = "auto"
    device: str | None = None
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    overwrite: bool = False
    regrade: bool = False

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not self.k or any(k < 1 for k in self.k):
            raise ValueError(f"k values must be >= 1, got {self.k}")
        if all(k > self.n for k in self.k):
            raise ValueError(f"every k in {self.k} exceeds n = {self.n}: Pass@k needs k <= n")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError("temperature must be >= 0 and top_p in (0, 1]")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0: off), got {self.top_k}")
        if self.grader_timeout <= 0:
            raise ValueError(f"grader_timeout must be > 0 seconds, got {self.grader_timeout}")
        if self.max_new_tokens < 1 or self.problems_per_call < 1 or self.batch_size < 1:
            raise ValueError("max_new_tokens, problems_per_call and batch_size must be >= 1")
        if self.max_problems is not None and self.max_problems < 1:
            raise ValueError("max_problems must be >= 1")
        if self.prompt_style not in PROMPT_STYLES:
            raise ValueError(f"prompt_style must be one of {PROMPT_STYLES}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
