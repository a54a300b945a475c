"""Generation backends behind one interface: vLLM on GPUs, transformers anywhere.

`backend.generate(prompts, n=..., temperature=..., top_p=..., top_k=..., max_new_tokens=..., seeds=...)`
takes chat conversations and returns, per prompt, `n` `Sample`s. Both backends render the
conversation with the tokenizer's own chat template (`add_generation_prompt=True`) and feed
token ids, so the two see exactly the same prompt tokens; both stop at the same token ids
(`stop_token_ids`) and apply the same top-k (0: none; transformers' own default of 50 never applies).

`seeds[i]` is prompt i's base seed: its samples use seeds `seeds[i] .. seeds[i] + n - 1` (vLLM
derives sample j's seed as seed + j), so callers give each prompt a disjoint range.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from mrtasks.rewards.parsing import chat_template_sha256

logger = logging.getLogger(__name__)

Messages = list[dict[str, str]]
BACKENDS = ("auto", "vllm", "transformers")


@dataclass(frozen=True)
class Sample:
    text: str
    num_tokens: int
    truncated: bool  # stopped by max_new_tokens, not by an end-of-sequence token


class GenerationBackend(Protocol):
    name: str

    def generate(
        self, prompts: list[Messages], *, n: int, temperature: float, top_p: float, top_k: int, max_new_tokens: int,
        seeds: list[int],
    ) -> list[list[Sample]]: ...

    def info(self) -> dict[str, Any]: ...

    def effective_top_k(self, top_k: int) -> int | None: ...


def stop_token_ids(tokenizer: Any, generation_eos: Any, stop_tokens: list[str] | None) -> list[int]:
    """The ids generation stops at: `stop_tokens` when given, else the model's eos (generation config
    and tokenizer) plus every end-of-turn token the tokenizer knows (a base model's eos is often
    `<|endoftext|>` while its chat template ends a turn with `<|im_end|>`)."""
    ids: list[int] = []

    def add(token_id: Any) -> None:
        if isinstance(token_id, int) and token_id not in ids:
            ids.append(token_id)

    if stop_tokens:
        for token in stop_tokens:
            token_id = tokenizer.convert_tokens_to_ids(token)
            if token_id is None or tokenizer.convert_ids_to_tokens(token_id) != token:
                raise ValueError(f"stop token {token!r} is not a token of this tokenizer")
            add(token_id)
        return ids
    for token_id in generation_eos if isinstance(generation_eos, list) else [generation_eos]:
        add(token_id)
    add(tokenizer.eos_token_id)
    from mrtasks.rewards.parsing import END_OF_TURN  # the tokens the grader cuts at

    vocab = tokenizer.get_vocab()
    for token in END_OF_TURN:
        add(vocab.get(token))
    return ids


def render_prompt(tokenizer: Any, messages: Messages) -> list[int]:
    """Token ids of `messages` under the tokenizer's chat template, ready for the assistant turn."""
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(
            "the tokenizer has no chat template; give a tokenizer that has one with --tokenizer"
        )
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def device_problem(device: str) -> str | None:
    """Why torch cannot generate on `device` here (an unknown device string, CUDA asked for on a
    machine or a torch build without it, a device index past the last one), or None when it can."""
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        return f"--device {device!r} is not a torch device; use cpu, cuda, cuda:N or mps"
    kind, index = parsed.type, parsed.index
    if kind == "cpu":
        return None
    if kind == "cuda":
        if not torch.cuda.is_available():
            why = "this torch is built without CUDA" if torch.version.cuda is None else "no CUDA device is visible"
            return f"--device {device}: {why} (torch {torch.__version__}); use --device cpu"
        count = torch.cuda.device_count()
        if index is not None and index >= count:
            return f"--device {device}: there are {count} CUDA device(s), numbered from 0"
        return None
    if kind == "mps":
        available = torch.backends.mps.is_available()
    else:
        module = getattr(torch, kind, None)
        available = bool(getattr(module, "is_available", lambda: False)())
    return None if available else f"--device {device}: torch cannot generate on {kind} on this machine"


def backend_problem(name: str) -> str | None:
    """Why the resolved backend `name` cannot run here (vLLM missing, or no CUDA for it), or None."""
    if name != "vllm":
        return None
    if importlib.util.find_spec("vllm") is None:
        return ("--backend vllm: vLLM is not installed (pip install -c constraints/gpu.txt -e '.[eval,vllm]'); "
                "use --backend transformers")
    import torch

    if not torch.cuda.is_available():
        return "--backend vllm needs a CUDA GPU and none is visible here; use --backend transformers"
    return None


def vllm_available() -> bool:
    if importlib.util.find_spec("vllm") is None:
        return False
    import torch

    return torch.cuda.is_available()


def resolve_backend(name: str) -> str:
    """`auto` -> `vllm` where vLLM and a CUDA device are present, else `transformers`."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose from {BACKENDS}")
    if name == "auto":
        return "vllm" if vllm_available() else "transformers"
    return name


class TransformersBackend:
    """Batched `model.generate` with `num_return_sequences`; runs on CPU for small models.

    `batch_size` bounds the sequences per `generate` call: `batch_size // n` prompts at once,
    or, when `n > batch_size`, one prompt's samples in chunks. Each call is seeded from `seed`.
    """

    name = "transformers"

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        tokenizer: str | None = None,
        dtype: str = "auto",
        device: str | None = None,
        batch_size: int = 64,
        stop_tokens: list[str] | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if dtype == "auto":
            torch_dtype = torch.bfloat16 if self.device.startswith("cuda") else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer or model, revision=None if tokenizer else revision)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model, revision=revision, dtype=torch_dtype)
        self.model.to(self.device).eval()
        self.stop_ids = stop_token_ids(self.tokenizer, self.model.generation_config.eos_token_id, stop_tokens)
        self.eos_ids = set(self.stop_ids)
        self.batch_size = batch_size
        self.dtype = str(torch_dtype).removeprefix("torch.")

    def info(self) -> dict[str, Any]:
        import torch
        import transformers

        return {
            "name": self.name,
            "version": transformers.__version__,
            "torch": torch.__version__,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "model_commit": getattr(self.model.config, "_commit_hash", None),
            "chat_template_sha256": chat_template_sha256(self.tokenizer),
            "stop_token_ids": self.stop_ids,
            "model_default_top_k": self._top_k_of(self.model.generation_config),
        }

    @staticmethod
    def _top_k_of(config: Any) -> int | None:
        """The top-k generate() applies for `config` (its unset fields take transformers' global defaults)."""
        top_k = config.top_k if config.top_k is not None else config._get_default_generation_params().get("top_k")
        return top_k or None

    def effective_top_k(self, top_k: int) -> int | None:
        """The top-k generate() applies with our setting over the model's generation config (None: off)."""
        config = self.model.generation_config.__class__.from_dict(self.model.generation_config.to_dict())
        config.update(top_k=top_k)
        return self._top_k_of(config)

    def generate(
        self, prompts: list[Messages], *, n: int, temperature: float, top_p: float, top_k: int, max_new_tokens: int,
        seeds: list[int],
    ) -> list[list[Sample]]:
        ids = [render_prompt(self.tokenizer, m) for m in prompts]
        per_call = min(n, self.batch_size)
        prompts_per_call = max(1, self.batch_size // n)
        results: list[list[Sample]] = [[] for _ in prompts]
        for start in range(0, len(ids), prompts_per_call):
            group = list(range(start, min(start + prompts_per_call, len(ids))))
            for done in range(0, n, per_call):
                k = min(per_call, n - done)
                # Seeded inside the first prompt's own range [seed, seed + n): never another prompt's.
                samples = self._generate_once([ids[i] for i in group], k, temperature, top_p, top_k, max_new_tokens,
                                              seeds[group[0]] + done)
                for j, i in enumerate(group):
                    results[i].extend(samples[j * k:(j + 1) * k])
        return results

    def _generate_once(self, ids: list[list[int]], k: int, temperature: float, top_p: float, top_k: int,
                       max_new_tokens: int, seed: int) -> list[Sample]:
        import torch

        batch = self.tokenizer.pad({"input_ids": ids}, return_tensors="pt").to(self.device)
        greedy = temperature == 0  # one deterministic sample per prompt, repeated k times below
        sampling = ({"do_sample": False} if greedy else
                    {"do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": top_k})
        torch.manual_seed(seed)
        with torch.inference_mode():
            out = self.model.generate(
                **batch,
                max_new_tokens=max_new_tokens,
                num_return_sequences=1 if greedy else k,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.stop_ids,
                **sampling,
            )
        if greedy:
            out = out.repeat_interleave(k, dim=0)
        generated = out[:, batch["input_ids"].shape[1]:].tolist()
        samples = []
        for row in generated:
            end = next((i for i, t in enumerate(row) if t in self.eos_ids), None)
            tokens = row if end is None else row[: end + 1]
            text = self.tokenizer.decode(tokens, skip_special_tokens=True)
            samples.append(Sample(text=text, num_tokens=len(tokens), truncated=end is None))
        return samples


class VLLMBackend:
    """vLLM offline inference: all `n` samples of a prompt in one request, seeded per prompt."""

    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        tokenizer: str | None = None,
        dtype: str = "auto",
        seed: int = 0,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        stop_tokens: list[str] | None = None,
    ):
        from vllm import LLM

        self.llm = LLM(
            model=model,
            revision=revision,
            tokenizer=tokenizer,
            dtype=dtype,
            seed=seed,
            tensor_parallel_size=tensor_parallel_size,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
        )
        self.tokenizer = self.llm.get_tokenizer()
        try:
            eos = self.llm.llm_engine.model_config.hf_config.eos_token_id
        except AttributeError:  # engine internals differ across vLLM versions; the tokenizer's eos still applies
            eos = None
        self.stop_ids = stop_token_ids(self.tokenizer, eos, stop_tokens)
        self.settings = {
            "chat_template_sha256": chat_template_sha256(self.tokenizer),
            "stop_token_ids": self.stop_ids,
            "model_commit": _model_commit(model, revision),
            "dtype": dtype,
            "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
        }

    def info(self) -> dict[str, Any]:
        import vllm

        return {"name": self.name, "version": vllm.__version__, **self.settings}

    def effective_top_k(self, top_k: int) -> int | None:
        return top_k or None

    def generate(
        self, prompts: list[Messages], *, n: int, temperature: float, top_p: float, top_k: int, max_new_tokens: int,
        seeds: list[int],
    ) -> list[list[Sample]]:
        from vllm import SamplingParams

        requests = [{"prompt_token_ids": render_prompt(self.tokenizer, m)} for m in prompts]
        # top_k -1 is "off" in every vLLM of TRL's window; sample j of prompt i is seeded seeds[i] + j.
        params = [
            SamplingParams(n=n, temperature=temperature, top_p=top_p, top_k=top_k or -1, max_tokens=max_new_tokens,
                           seed=seed, stop_token_ids=self.stop_ids)
            for seed in seeds
        ]
        outputs = self.llm.generate(requests, params, use_tqdm=False)
        return [
            [Sample(o.text, len(o.token_ids), o.finish_reason == "length") for o in out.outputs] for out in outputs
        ]


def _model_commit(model: str, revision: str | None) -> str | None:
    """The Hub commit a model name resolved to (None for local folders)."""
    try:
        from transformers import AutoConfig

        return getattr(AutoConfig.from_pretrained(model, revision=revision), "_commit_hash", None)
    except Exception as e:  # noqa: BLE001 - a record for the summary, never a reason to fail the run
        logger.warning("could not resolve the commit of %s: %s", model, e)
        return None


def make_backend(name: str, model: str, **kwargs: Any) -> GenerationBackend:
    """Build a backend by name (`auto`, `vllm`, `transformers`); kwargs the other one lacks are dropped."""
    name = resolve_backend(name)
    if name == "vllm":
        keys = {"revision", "tokenizer", "dtype", "seed", "tensor_parallel_size", "gpu_memory_utilization",
                "max_model_len", "stop_tokens"}
        return VLLMBackend(model, **{k: v for k, v in kwargs.items() if k in keys})
    keys = {"revision", "tokenizer", "dtype", "device", "batch_size", "stop_tokens"}
    return TransformersBackend(model, **{k: v for k, v in kwargs.items() if k in keys})
