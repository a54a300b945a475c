"""The settings of one evaluation run; defaults are the paper's (Experimental Setup)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from eval.benchmarks import DEFAULT_BENCHMARKS
from mrtasks.mathcheck import OFFLINE_TIMEOUT_S

PROMPT_STYLES = ("paper", "chat-template")
# The dtype names both backends take (vLLM's `dtype=`, torch's attribute for transformers); auto:
# bfloat16 on GPU, float32 on CPU (transformers), the model's own (vLLM).
DTYPES = ("auto", "float32", "float16", "bfloat16", "float", "half")
# The grader's per-completion bound: above a day the pool's wait() overflows, and no grading needs it.
MAX_GRADER_TIMEOUT_S = 86_400.0
# Seeds must suit every consumer: numpy (vLLM's LLM(seed=...)) takes [0, 2**32).
MAX_SEED = 2**32 - 1

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
        """Refuse every value out of range (NaN and infinities included) with a one-line ValueError."""

        def finite(value: Any) -> bool:
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if not self.k or any(k < 1 for k in self.k):
            raise ValueError(f"k values must be >= 1, got {self.k}")
        if all(k > self.n for k in self.k):
            raise ValueError(f"every k in {self.k} exceeds n = {self.n}: Pass@k needs k <= n")
        if not finite(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0 (0: greedy), got {self.temperature}")
        if not finite(self.top_p) or not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0: off), got {self.top_k}")
        if not finite(self.grader_timeout) or not 0 < self.grader_timeout <= MAX_GRADER_TIMEOUT_S:
            raise ValueError(f"grader_timeout must be > 0 and <= {MAX_GRADER_TIMEOUT_S:g} seconds, "
                             f"got {self.grader_timeout}")
        if self.max_new_tokens < 1 or self.problems_per_call < 1 or self.batch_size < 1:
            raise ValueError("max_new_tokens, problems_per_call and batch_size must be >= 1")
        if self.max_problems is not None and self.max_problems < 1:
            raise ValueError("max_problems must be >= 1")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed must be in [0, 2**32 - 1], got {self.seed}")
        if self.prompt_style not in PROMPT_STYLES:
            raise ValueError(f"prompt_style must be one of {PROMPT_STYLES}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.tensor_parallel_size < 1:
            raise ValueError(f"tensor_parallel_size must be >= 1, got {self.tensor_parallel_size}")
        if not finite(self.gpu_memory_utilization) or not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization must be a fraction in (0, 1], got {self.gpu_memory_utilization}")
        if self.max_model_len is not None and self.max_model_len < 1:
            raise ValueError(f"max_model_len must be >= 1 tokens, got {self.max_model_len}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
