"""The settings of one evaluation run; defaults are the paper's (Experimental Setup)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from eval.benchmarks import DEFAULT_BENCHMARKS

PROMPT_STYLES = ("paper", "chat-template")

# Settings that change what gets generated: a resumed run must match them exactly.
GENERATION_KEYS = (
    "model", "revision", "tokenizer", "backend", "n", "temperature", "top_p", "max_new_tokens", "seed",
    "prompt_style",
)


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
    max_new_tokens: int = 4096
    seed: int = 0
    prompt_style: str = "paper"
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
        if self.max_new_tokens < 1 or self.problems_per_call < 1 or self.batch_size < 1:
            raise ValueError("max_new_tokens, problems_per_call and batch_size must be >= 1")
        if self.max_problems is not None and self.max_problems < 1:
            raise ValueError("max_problems must be >= 1")
        if self.prompt_style not in PROMPT_STYLES:
            raise ValueError(f"prompt_style must be one of {PROMPT_STYLES}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
