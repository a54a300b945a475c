"""`python -m mrtasks.demo DIR`: load a built dataset folder and score example completions.

What `make demo` runs after the offline build: for one row of each task config, the completions
of the reward audit's policies (`mrtasks.rewards.audit`: the reference answer, right work in
another form, and cheap ways to look right) and what the task's reward gives each of them.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import datasets
from datasets import get_dataset_config_names, load_dataset

from mrtasks.logs import first_line, run_command
from mrtasks.rewards.audit import policies_for, score_rows
from mrtasks.rewards.rows import DatasetError, build_configs, load_rows, row_problem
from mrtasks.tasks import get_task, list_tasks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 shown; 2 a dataset that is missing, not a build, unreadable, or without that split; "
               "130 interrupted",
    )
    parser.add_argument("dataset", help="a folder written by `python -m mrtasks.build --out DIR`, or a Hub id")
    parser.add_argument("--split", default="train", help="split to read (default: train)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    datasets.disable_progress_bars()
    return run_command(lambda: show(args.dataset, args.split), {DemoError: 2})


class DemoError(Exception):
    """A dataset the demo cannot read (one line)."""


def show(dataset: str, split: str) -> int:
    folder = Path(dataset)
    local = folder.exists() or dataset.startswith((".", "/", "~")) or dataset.count("/") != 1
    if local:
        if not folder.is_dir():
            raise DemoError(f"{dataset}: no such folder (build one with `python -m mrtasks.build --out {dataset}`)")
        try:
            configs = build_configs(folder)  # the card's configs: a build without its card is refused
        except DatasetError as e:
            raise DemoError(str(e)) from None
    else:
        try:
            configs = get_dataset_config_names(dataset)
        except Exception as e:  # noqa: BLE001 - offline, missing, a broken card: one line
            raise DemoError(f"cannot read the configs of {dataset}: {first_line(e, named=True)}") from None
    for task in list_tasks():
        if task not in configs:
            print(f"\n== {task}: no {task} config in {dataset} (its corpus cannot feed this task); skipped")
            continue
        reward_name = get_task(task).reward
        if local:
            if split not in configs[task]:
                raise DemoError(f"--split {split}: {dataset} [{task}] has no such split")
            try:  # read fresh and checked, row by row (`mrtasks.rewards.rows`)
                ds = load_rows(folder, task, [split])
            except DatasetError as e:
                raise DemoError(str(e)) from None
        else:
            ds = _load_hub(dataset, task, split)
        if len(ds) == 0:
            print(f"\n== {task}: no {split} rows; skipped")
            continue
        row = ds[0]
        if problem := row_problem(row, task):
            raise DemoError(f"{dataset}: {task} {split} row 0 (id {row.get('id')!r}): {problem}")
        print(f"\n== {task}: {len(ds)} {split} rows; row {row['id']!r} ({row['source']}, {row['kind']})")
        print("user prompt:", row["prompt"][-1]["content"][:400].replace("\n", " "), "...")
        for policy in policies_for(task):
            (score,) = score_rows(task, [row], policy, reward_name)
            print(f"  {reward_name:<16} {policy.name:<22} -> {score:.3f}   {policy.description}")
    return 0


def _load_hub(dataset: str, task: str, split: str) -> Any:
    try:
        return load_dataset(dataset, task, split=split)
    except ValueError as e:
        if "Unknown split" in str(e):
            raise DemoError(f"--split {split}: {dataset} [{task}] has no such split") from None
        raise DemoError(f"cannot load the {task} config of {dataset}: {first_line(e, named=True)}") from None
    except Exception as e:  # noqa: BLE001 - offline, a broken repo: one line
        raise DemoError(f"cannot load the {task} config of {dataset}: {first_line(e, named=True)}") from None


if __name__ == "__main__":
    sys.exit(main())
