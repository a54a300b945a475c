"""Evaluation: sample with vLLM or transformers, grade with the `outcome` reward, report Pass@k.

`python -m eval.run --help` evaluates one model; `python -m eval.compare --help` tabulates runs.
"""
