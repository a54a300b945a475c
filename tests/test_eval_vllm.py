"""The vLLM backend on a CUDA machine (skipped cleanly where vLLM or a GPU is missing)."""

import json

import pytest

from eval.run import main, prompt_messages
from training.tiny_model import build_tiny_model

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def vllm_model(tmp_path_factory):
    pytest.importorskip("vllm")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    # head_dim 64: a size every vLLM attention backend supports.
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny"), ["What is $1+1$? \\boxed{2}"], hidden_size=256))


def test_vllm_backend_samples_n_per_prompt_seeded(vllm_model):
    from eval.generation import VLLMBackend

    backend = VLLMBackend(vllm_model, gpu_memory_utilization=0.3, max_model_len=1024)
    prompts = [prompt_messages("What is $1+1$?", "paper"), prompt_messages("Find $x$.", "chat-template")]
    kwargs = dict(n=4, temperature=0.6, top_p=0.95, top_k=0, max_new_tokens=8, seeds=[3, 7])
    first = backend.generate(prompts, **kwargs)
    assert [len(samples) for samples in first] == [4, 4]
    assert all(1 <= s.num_tokens <= 8 for samples in first for s in samples)
    assert backend.generate(prompts, **kwargs) == first
    assert backend.info()["name"] == "vllm" and backend.info()["version"]


def test_eval_run_with_vllm(vllm_model, shared_data, tmp_path):
    main(["--model", vllm_model, "--backend", "vllm", "--benchmark-dir", str(shared_data / "benchmarks"),
          "--benchmarks", "aime24", "--max-problems", "2", "--n", "4", "--k", "1", "4", "--max-new-tokens", "8",
          "--gpu-memory-utilization", "0.3", "--max-model-len", "2048", "--output-dir", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["generation"]["backend"]["name"] == "vllm"
    assert summary["benchmarks"]["aime24"]["num_samples"] == 8
