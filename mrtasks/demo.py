"""`python -m mrtasks.demo DIR`: load a built dataset folder and score a few example completions.

What `make demo` runs after the offline build: it shows one row of each task config and what
the registry's rewards give for a correct, a partly wrong and an unparsable completion.
"""

from __future__ import annotations

import argparse
import logging

import datasets
from datasets import load_dataset

from mrtasks.rewards import get_reward
from mrtasks.tasks import MASKED_THEN_FILL, STEP_REORDERING, get_task, list_tasks


def _boxed(inner: str) -> str:
    return f"<think>working...</think>\n\\boxed{{{inner}}}"


def example_completions(task: str, row: dict) -> dict[str, str]:
    """Hand-made completions for one row: the reference answer and some near misses."""
    reference = {"reference": "<think>working...</think>\n" + get_task(task).reference_answer(row)}
    if task == MASKED_THEN_FILL:
        masks = row["masks"]
        wrong = [masks[0] + " + 1"] + masks[1:]
        return reference | {
            "first mask wrong": _boxed("; ".join(wrong)),
            "masks in reverse": _boxed("; ".join(reversed(masks))),
        }
    if task == STEP_REORDERING:
        order = row["order"]
        swapped = [order[1], order[0], *order[2:]]
        return reference | {"first two swapped": _boxed(", ".join(map(str, swapped)))}
    if "answer" in row:
        return reference | {"wrong": _boxed(row["answer"] + "1")}
    # Any other task: the reward audit's policies for it (its degenerate answers and positive control).
    from mrtasks.rewards.audit import policies_for

    policies = [p for p in policies_for(task) if p.name != "reference" and not p.options]
    return reference | {p.name.replace("_", " "): "<think>working...</think>\n" + p.answer(row) for p in policies}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dataset", help="a folder written by `python -m mrtasks.build --out DIR`, or a Hub id")
    parser.add_argument("--split", default="train", help="split to read (default: train)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    datasets.disable_progress_bars()

    for task in list_tasks():
        reward_name = get_task(task).reward
        ds = load_dataset(args.dataset, task, split=args.split)
        row = ds[0]
        reward = get_reward(reward_name)
        print(f"\n== {task}: {len(ds)} {args.split} rows; row {row['id']!r} ({row['source']}, {row['kind']})")
        print("user prompt:", row["prompt"][-1]["content"][:400].replace("\n", " "), "...")
        cases = example_completions(task, row) | {"no boxed answer": "I am not sure."}
        columns = {k: [v] * len(cases) for k, v in row.items() if k != "prompt"}
        scores = reward(list(cases.values()), **columns)
        for (name, _), score in zip(cases.items(), scores):
            print(f"  {reward_name:<16} {name:<20} -> {score:.3f}")


if __name__ == "__main__":
    main()
