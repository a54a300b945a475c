"""`python -m mrtasks.demo DIR`: load a built dataset folder and score example completions.

What `make demo` runs after the offline build: for one row of each task config, the completions
of the reward audit's policies (`mrtasks.rewards.audit`: the reference answer, right work in
another form, and cheap ways to look right) and what the task's reward gives each of them.
"""

from __future__ import annotations

import argparse
import logging

import datasets
from datasets import load_dataset

from mrtasks.rewards.audit import policies_for, score_rows
from mrtasks.tasks import get_task, list_tasks


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
        print(f"\n== {task}: {len(ds)} {args.split} rows; row {row['id']!r} ({row['source']}, {row['kind']})")
        print("user prompt:", row["prompt"][-1]["content"][:400].replace("\n", " "), "...")
        for policy in policies_for(task):
            (score,) = score_rows(task, [row], policy, reward_name)
            print(f"  {reward_name:<16} {policy.name:<22} -> {score:.3f}   {policy.description}")


if __name__ == "__main__":
    main()
