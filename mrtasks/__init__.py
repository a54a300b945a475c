"""mr-rlvr: self-supervised RL tasks and verifiable rewards from math reasoning trajectories (MR-RLVR).

The data flows one way: sources -> curation -> tasks -> dataset -> rewards -> training/eval.
The code is layered, bottom to top: leaf modules (`text`, `trajectory`, `jsonl`, `logs`, `prompts`),
the answer checker (`mathcheck`), `tasks`, `rewards`, `curate`, then `build` and `demo`; a module
imports its own layer or lower ones (README, "Architecture"; `tests/test_layers.py`).
This package imports without torch, trl or vllm.
"""

__version__ = "0.1.0"
