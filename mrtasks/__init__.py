"""mr-rlvr: self-supervised RL tasks and verifiable rewards from math reasoning trajectories (MR-RLVR).

The data flows one way: sources -> curation -> tasks -> dataset -> rewards -> training/eval.
This package imports without torch, trl or vllm.
"""

__version__ = "0.1.0"
