"""Recreate the external corpus behind tests/data/annotator_gold_external.jsonl, and show how the
round-2 annotator fixture rows were picked.

    python tests/data/make_annotator_external.py build --olympiadbench DIR --imobench DIR \
        --math DIR --out annotator_external.jsonl
    python tests/data/make_annotator_external.py pick --external annotator_external.jsonl

`build` reads three public GitHub repositories (clones or bare mirrors; DIR is the repository
folder) at the pinned commits below with `git show`/`git archive`, and writes one JSON line per
solution with the fields `id`, `source`, `kind`, `problem`, `solution` (texts unchanged, nothing
cleaned). The benchmark reads it with the source spec `FILE:kind=kind,id=id,name=external`, so the
fixture ids are `external/<id>`. The texts are public data that we may not commit: this file is
the recipe, and the fixture's `solution_sha256` proves a recreated file is the one labelled.

`pick` prints the seeded choice (for the record; the fixture rows were made from its output): per
group, the eligible rows sorted by sha256(SEED + "/" + id), the first ones taken, the first
`heldout` of them held out. Groups and rules are in `GROUPS`. `pick --round 3` draws the round-3
fixture (`annotator_gold_round3.jsonl`): its own seed, every row an earlier fixture labelled left
out, sizes in `GROUPS_ROUND3`, all held out; `pick --round 4` the same with its own seed, round 3's rows
left out too; `pick --round 5` with its own seed leaves out round 4's rows and the rows of
screens A-E (`SCREENED_ROUND5`) as well; `pick --round 6` leaves out round 5's rows and screen F too; `pick --round 9`
leaves out round 6's rows and screen G, and takes more olympiad proofs and computations (`GROUP_SIZES`);
`pick --round 11` leaves out round 9's rows and screen H, and takes mostly proofs (no IMO-ProofBench row is left);
`pick --round 12` leaves out round 11's rows too, and takes more computations again; `pick --round 13` leaves out
round 12's rows too, and takes every olympiad proof left; `pick --round 14` leaves out round 13's rows and screen I,
and takes the long ProofNet/miniF2F proofs and MATH computations (no olympiad proof is left); `pick --round 15` draws
from the three computational sets of the shared corpora that no round since round 1 measured (`SHARED_COMPUTATIONS`:
OlympiadBench open-ended solutions, Qwen2.5-Math CoTs, GSM8K), every labelled or screened row left out, the first half
of each group held out and the second half tune; `pick --round 16` leaves out round 15's rows too and takes only model-written
CoTs (`MODEL_COTS`), all held out, to measure the model-CoT step rules that round 15's tune half led to; `pick --round 17`
leaves out round 16's rows too and takes 12 more model-written CoTs as tune material; `pick --round 18` leaves out
round 17's rows too and takes 12 more, all held out, to measure the rule round 17's rows led to; `pick --round 19`
leaves out round 18's rows too and takes 12 more model-written CoTs and 12 MATH Level-5 computations, all held out,
to measure the final-answer change (a value alone in its box is no key formula); `pick --round 20` leaves out round 19's
rows too and takes 12 long ProofNet/miniF2F proofs, 6 MATH Level-5 and 6 OlympiadBench open-ended computations, all
held out, to measure both annotators (the heuristic, and the llm one through `mrtasks.curate.batch`) on rows nobody read;
`pick --round 21` draws the same groups again, round 20's rows and the trajectories of screens J-M left out too, to
measure the llm annotator's bookkeeping changes that rounds 9-20 were measured before and after; `pick --round 22`
draws them once more, round 21's rows left out too, to measure both annotators after the lexicon's second round and the
proof-structure step rules; `pick --round 25` (tune) leaves out round 24's rows too and takes the last three long
ProofNet/miniF2F proofs and 21 shorter olympiad proofs (`olympiadbench_tp_short`, 1000-2499 chars: every longer one is
labelled or screened), proofs labelled with the guide of the frozen rounds 18-23 as tune material; `pick --round 26`
leaves out round 25's rows too and takes 12 more shorter olympiad proofs, 6 MATH Level-5 and 6 OlympiadBench open-ended
computations, all held out, to measure both annotators after round 25's `llm` rules on rows nobody read.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

OLYMPIADBENCH = ("OpenBMB/OlympiadBench", "61bf12a89d097ec304b07e0254b6338aeb1b0a4c", "data.zip")
OB_MEMBER = "data/English_Olympiad_Mathematics.json"
IMOBENCH = ("google-deepmind/superhuman", "92ae8c2e88dee12a3f793dd88a5e80ed76754c2a", "imobench/proofbench.csv")
MATH = ("aiwaves-cn/agents", "80b8e99666ccadc973ca3a443dd179a5d54c9e8d", "src/agents/datasets/data/math/train")

SEED = "annotator-gold-round2"
SEED_ROUND3 = "annotator-gold-round3"
SEED_ROUND4 = "annotator-gold-round4"
SEED_ROUND5 = "annotator-gold-round5"
SEED_ROUND6 = "annotator-gold-round6"
SEED_ROUND9 = "annotator-gold-round9"
SEED_ROUND11 = "annotator-gold-round11"
SEED_ROUND12 = "annotator-gold-round12"
SEED_ROUND13 = "annotator-gold-round13"
SEED_ROUND14 = "annotator-gold-round14"
SEED_ROUND15 = "annotator-gold-round15"
SEED_ROUND16 = "annotator-gold-round16"
SEED_ROUND17 = "annotator-gold-round17"
SEED_ROUND18 = "annotator-gold-round18"
SEED_ROUND19 = "annotator-gold-round19"
SEED_ROUND20 = "annotator-gold-round20"
SEED_ROUND21 = "annotator-gold-round21"
SEED_ROUND22 = "annotator-gold-round22"
SEED_ROUND23 = "annotator-gold-round23"
SEED_ROUND24 = "annotator-gold-round24"
SEED_ROUND25 = "annotator-gold-round25"
SEED_ROUND26 = "annotator-gold-round26"
SPEC = "{file}:kind=kind,id=id,name=external"
CORPORA_PROOFS = ("proofnet_test", "proofnet_valid", "minif2f_informal")
# group -> (rule, how many, how many held out)
GROUPS = {
    "olympiadbench_tp": ("Theorem_Proving rows, first solution 2500-8000 chars", 10, 8),
    "imo_proofbench": ("all rows, solution 2000-8000 chars", 6, 4),
    "math_train": ("Level 5, solution 1000-8000 chars", 10, 7),
    "corpora_proofs": ("proofnet_test/valid + minif2f_informal rows not in annotator_gold.jsonl, "
                       "solution at least the 75th percentile of their lengths", 10, 6),
    "olympiadbench_tp_short": ("Theorem_Proving rows, first solution 1000-2499 chars (drawn from round 25 on, when "
                               "every longer one was labelled or screened)", 0, 0),
}
# rounds 3 and later: the same rules, rows no earlier fixture labelled, every row held out
GROUPS_ROUND3 = {"olympiadbench_tp": 6, "imo_proofbench": 4, "math_train": 6, "corpora_proofs": 6}
# round 9 takes more olympiad proofs and computations: the two figures issue 20 still misses
GROUP_SIZES = {9: {"olympiadbench_tp": 8, "imo_proofbench": 4, "math_train": 10, "corpora_proofs": 6},
               11: {"olympiadbench_tp": 10, "imo_proofbench": 0, "math_train": 6, "corpora_proofs": 8},
               12: {"olympiadbench_tp": 8, "imo_proofbench": 0, "math_train": 10, "corpora_proofs": 6},
               13: {"olympiadbench_tp": 10, "imo_proofbench": 0, "math_train": 8, "corpora_proofs": 6},
               14: {"olympiadbench_tp": 10, "imo_proofbench": 0, "math_train": 8, "corpora_proofs": 12},
               19: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 12, "corpora_proofs": 0},
               20: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 6, "corpora_proofs": 12},
               21: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 6, "corpora_proofs": 12},
               22: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 6, "corpora_proofs": 12},
               23: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 6, "corpora_proofs": 12},
               24: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 12, "corpora_proofs": 0},
               25: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 0, "corpora_proofs": 3,
                    "olympiadbench_tp_short": 21},
               26: {"olympiadbench_tp": 0, "imo_proofbench": 0, "math_train": 6, "corpora_proofs": 0,
                    "olympiadbench_tp_short": 12}}
TUNE_ROUNDS = (24, 25)
"""Rounds drawn as tune material: every row `tune` (round 24: computations labelled with the guide the frozen rounds
18-23 were labelled with, which no tune round had for MATH; round 25: proofs, the same for olympiad and ProofNet
proofs, whose only tune rows were labelled with earlier guides)."""
EARLIER_FIXTURES = ("annotator_gold.jsonl", "annotator_gold_proofs.jsonl", "annotator_gold_external.jsonl")
LATER_ROUNDS = {3: (SEED_ROUND3, EARLIER_FIXTURES),
                4: (SEED_ROUND4, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl")),
                5: (SEED_ROUND5, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl")),
                6: (SEED_ROUND6, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl",
                                  "annotator_gold_round5.jsonl")),
                9: (SEED_ROUND9, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl",
                                  "annotator_gold_round5.jsonl", "annotator_gold_round6.jsonl")),
                11: (SEED_ROUND11, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl",
                                    "annotator_gold_round5.jsonl", "annotator_gold_round6.jsonl",
                                    "annotator_gold_round9.jsonl")),
                12: (SEED_ROUND12, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl",
                                    "annotator_gold_round5.jsonl", "annotator_gold_round6.jsonl",
                                    "annotator_gold_round9.jsonl", "annotator_gold_round11.jsonl")),
                13: (SEED_ROUND13, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl",
                                    "annotator_gold_round5.jsonl", "annotator_gold_round6.jsonl",
                                    "annotator_gold_round9.jsonl", "annotator_gold_round11.jsonl",
                                    "annotator_gold_round12.jsonl")),
                14: (SEED_ROUND14, (*EARLIER_FIXTURES, "annotator_gold_round3.jsonl", "annotator_gold_round4.jsonl",
                                    "annotator_gold_round5.jsonl", "annotator_gold_round6.jsonl",
                                    "annotator_gold_round9.jsonl", "annotator_gold_round11.jsonl",
                                    "annotator_gold_round12.jsonl", "annotator_gold_round13.jsonl"))}
LATER_ROUNDS[15] = (SEED_ROUND15, (*LATER_ROUNDS[14][1], "annotator_gold_round14.jsonl"))
# round 15: shared-corpora computation sets -> (rule, minimum solution chars, how many, how many held out)
SHARED_COMPUTATIONS = {
    "olympiadbench_oe_en": ("OlympiadBench open-ended English solutions of at least 1000 chars", 1000, 10, 5),
    "qwen_math_cot_100": ("Qwen2.5-Math CoTs scored correct, at least 800 chars", 800, 10, 5),
    "gsm8k_train_first2000": ("GSM8K train solutions of at least 300 chars", 300, 4, 2),
}
LATER_ROUNDS[16] = (SEED_ROUND16, (*LATER_ROUNDS[15][1], "annotator_gold_round15.jsonl"))
MODEL_COTS = {"qwen_math_cot_100": ("Qwen2.5-Math CoTs scored correct, at least 500 chars", 500, 12, 12)}
LATER_ROUNDS[17] = (SEED_ROUND17, (*LATER_ROUNDS[16][1], "annotator_gold_round16.jsonl"))
MODEL_COTS_TUNE = {name: (rule, min_chars, n, 0) for name, (rule, min_chars, n, _) in MODEL_COTS.items()}
LATER_ROUNDS[18] = (SEED_ROUND18, (*LATER_ROUNDS[17][1], "annotator_gold_round17.jsonl"))
LATER_ROUNDS[19] = (SEED_ROUND19, (*LATER_ROUNDS[18][1], "annotator_gold_round18.jsonl"))
LATER_ROUNDS[20] = (SEED_ROUND20, (*LATER_ROUNDS[19][1], "annotator_gold_round19.jsonl"))
LATER_ROUNDS[21] = (SEED_ROUND21, (*LATER_ROUNDS[20][1], "annotator_gold_round20.jsonl"))
LATER_ROUNDS[22] = (SEED_ROUND22, (*LATER_ROUNDS[21][1], "annotator_gold_round21.jsonl"))
LATER_ROUNDS[23] = (SEED_ROUND23, (*LATER_ROUNDS[22][1], "annotator_gold_round22.jsonl"))
LATER_ROUNDS[24] = (SEED_ROUND24, (*LATER_ROUNDS[23][1], "annotator_gold_round23.jsonl"))
LATER_ROUNDS[25] = (SEED_ROUND25, (*LATER_ROUNDS[24][1], "annotator_gold_round24.jsonl"))
LATER_ROUNDS[26] = (SEED_ROUND26, (*LATER_ROUNDS[25][1], "annotator_gold_round25.jsonl"))
OPEN_ENDED = {"olympiadbench_oe_en": ("OlympiadBench open-ended English solutions of at least 1000 chars", 1000, 6, 6)}
OPEN_ENDED_TUNE = {"olympiadbench_oe_en": ("OlympiadBench open-ended English solutions of at least 1000 chars", 1000, 12, 0)}
SCREENED_ROUND5 = ("shared_corpora_a", "external_b", "external_c", "external_d", "external_e")
SCREENED = {5: SCREENED_ROUND5, 6: (*SCREENED_ROUND5, "external_f"), 9: (*SCREENED_ROUND5, "external_f", "external_g"),
            11: (*SCREENED_ROUND5, "external_f", "external_g", "external_h"),
            12: (*SCREENED_ROUND5, "external_f", "external_g", "external_h"),
            13: (*SCREENED_ROUND5, "external_f", "external_g", "external_h"),
            **dict.fromkeys((14, 15, 16, 17, 18, 19, 20), (*SCREENED_ROUND5, "external_f", "external_g", "external_h", "external_i")),
            **dict.fromkeys((21, 22, 23, 24, 25, 26), (*SCREENED_ROUND5, "external_f", "external_g", "external_h", "external_i",
                                       "screens_jk_trajectories", "screens_lm_trajectories"))}
"""Rounds 5 and 6 also leave out the rows of the bookkeeping screens that existed when each was drawn
(`bookkeeping_screens/NAME.ids.json`, some read while tuning), named so that a later screen never moves the choice."""


def git_bytes(repo: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True, capture_output=True).stdout


def olympiadbench_rows(repo: Path) -> list[dict]:
    name, commit, path = OLYMPIADBENCH
    with zipfile.ZipFile(io.BytesIO(git_bytes(repo, commit, path))) as z:
        data = json.loads(z.read(OB_MEMBER))
    return [
        {"id": f"olympiadbench_tp/{r['id']}", "source": "olympiadbench_tp", "kind": "proof",
         "problem": r["question"], "solution": r["solution"][0], "origin": r["source"]}
        for r in data if r["label"] == "Theorem_Proving"
    ]


def imobench_rows(repo: Path) -> list[dict]:
    name, commit, path = IMOBENCH
    text = git_bytes(repo, commit, path).decode("utf-8")
    return [
        {"id": f"imo_proofbench/{r['Problem ID']}", "source": "imo_proofbench", "kind": "proof",
         "problem": r["Problem"], "solution": r["Solution"], "origin": r["Source"]}
        for r in csv.DictReader(io.StringIO(text, newline=""))
    ]


def math_rows(repo: Path) -> list[dict]:
    name, commit, path = MATH
    tar = subprocess.run(["git", "-C", str(repo), "archive", commit, path], check=True, capture_output=True).stdout
    rows = []
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            if not m.isfile() or not m.name.endswith(".json"):
                continue
            r = json.loads(t.extractfile(m).read())
            subject, number = m.name.split("/")[-2], Path(m.name).stem
            rows.append({"id": f"math_train/{subject}/{number}", "source": "math_train", "kind": "computation",
                         "problem": r["problem"], "solution": r["solution"], "level": r["level"]})
    return rows


def build(args: argparse.Namespace) -> None:
    rows = olympiadbench_rows(args.olympiadbench) + imobench_rows(args.imobench) + math_rows(args.math)
    with open(args.out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}")


def _key(rid: str, seed: str = SEED) -> str:
    return hashlib.sha256(f"{seed}/{rid}".encode()).hexdigest()


def _eligible(group: str, raw: dict, n: int) -> bool:
    if group == "olympiadbench_tp":
        return 2500 <= n <= 8000
    if group == "olympiadbench_tp_short":
        return 1000 <= n < 2500
    if group == "imo_proofbench":
        return 2000 <= n <= 8000
    if group == "math_train":
        return raw.get("level") == "Level 5" and 1000 <= n <= 8000
    raise ValueError(group)


def pick(args: argparse.Namespace) -> None:
    from mrtasks.curate.base import Drop
    from mrtasks.curate.sources import expand_specs, iter_source, parse_source

    here = Path(__file__).resolve().parent
    raw = {f"external/{r['id']}": r for r in map(json.loads, open(args.external, encoding="utf-8"))}
    trajs = [t for t in iter_source(parse_source(SPEC.format(file=args.external))) if not isinstance(t, Drop)]
    groups: dict[str, list] = {g: [] for g in GROUPS}
    for t in trajs:
        src = raw[t.id]["source"]
        for group in (src, f"{src}_short") if src == "olympiadbench_tp" else (src,):
            if _eligible(group, raw[t.id], len(t.solution)):
                groups[group].append(t)
    labelled = {json.loads(line)["id"] for line in open(here / "annotator_gold.jsonl", encoding="utf-8")}
    if args.round in LATER_ROUNDS:
        earlier = LATER_ROUNDS[args.round][1]
        labelled |= {json.loads(line)["id"] for f in earlier for line in open(here / f, encoding="utf-8")}
    if args.round in SCREENED:
        labelled |= {i for name in SCREENED[args.round]
                     for i in json.loads((here / "bookkeeping_screens" / f"{name}.ids.json").read_text(encoding="utf-8"))}
    if args.round in SHARED_ROUNDS:
        _pick_shared_computations(args.corpora, labelled, *SHARED_ROUNDS[args.round])
        if args.round not in GROUP_SIZES:
            return  # rounds 19-21 also draw from the external groups
    proofs = [
        t for s in expand_specs([parse_source(f"corpora:{args.corpora}")]) if s.name in CORPORA_PROOFS
        for t in iter_source(s) if not isinstance(t, Drop)
    ]
    lengths = sorted(len(t.solution) for t in proofs)
    q75 = lengths[int(0.75 * len(lengths))]
    groups["corpora_proofs"] = [t for t in proofs if t.id not in labelled and len(t.solution) >= q75]
    for group, (rule, n, held) in GROUPS.items():
        seed = SEED
        if args.round in LATER_ROUNDS:
            seed, n = LATER_ROUNDS[args.round][0], GROUP_SIZES.get(args.round, GROUPS_ROUND3).get(group, 0)
            held = 0 if args.round in TUNE_ROUNDS else n
            groups[group] = [t for t in groups[group] if t.id not in labelled]
        chosen = sorted(groups[group], key=lambda t: _key(t.id, seed))[:n]
        _print_choice(chosen, None if group == "corpora_proofs" else group.removesuffix("_short"), held)
        print(f"# {group}: {len(groups[group])} eligible ({rule}), {len(chosen)} picked, {min(held, len(chosen))} held out",
              file=sys.stderr)


def _print_choice(chosen: list, source: str | None, held: int) -> None:
    """One fixture-row stub per chosen trajectory (source: the group's name, or None for the trajectory's own), the
    first `held` held out."""
    for k, t in enumerate(chosen):
        sha = hashlib.sha256(t.solution.encode()).hexdigest()[:16]
        print(json.dumps({"id": t.id, "source": source or t.source, "kind": t.kind,
                          "split": "heldout" if k < held else "tune", "solution_sha256": sha}))


SHARED_ROUNDS = {15: (SHARED_COMPUTATIONS, SEED_ROUND15), 16: (MODEL_COTS, SEED_ROUND16), 17: (MODEL_COTS_TUNE, SEED_ROUND17),
                 18: (MODEL_COTS, SEED_ROUND18), 19: (MODEL_COTS, SEED_ROUND19), 20: (OPEN_ENDED, SEED_ROUND20),
                 21: (OPEN_ENDED, SEED_ROUND21), 22: (OPEN_ENDED, SEED_ROUND22), 23: (OPEN_ENDED, SEED_ROUND23),
                 24: (OPEN_ENDED_TUNE, SEED_ROUND24), 26: (OPEN_ENDED, SEED_ROUND26)}
"""The rounds drawn from the shared corpora alone: their groups and seed."""


def _pick_shared_computations(corpora: Path, labelled: set[str], groups: dict, seed: str) -> None:
    """Rounds 15-18: per group of the shared corpora (`SHARED_ROUNDS`), the unlabelled rows
    long enough to have steps, sorted by sha256(seed + "/" + id), the first taken, the first of those held out."""
    from mrtasks.curate.base import Drop
    from mrtasks.curate.sources import expand_specs, iter_source, parse_source

    for spec in expand_specs([parse_source(f"corpora:{corpora}")]):
        if spec.name not in groups:
            continue
        rule, min_chars, n, held = groups[spec.name]
        eligible = [t for t in iter_source(spec)
                    if not isinstance(t, Drop) and t.id not in labelled and len(t.solution) >= min_chars]
        chosen = sorted(eligible, key=lambda t: _key(t.id, seed))[:n]
        _print_choice(chosen, spec.name, held)
        print(f"# {spec.name}: {len(eligible)} eligible ({rule}), {len(chosen)} picked, {held} held out", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="write the external corpus JSONL from the three repositories")
    b.add_argument("--olympiadbench", type=Path, required=True, help=f"a clone of {OLYMPIADBENCH[0]}")
    b.add_argument("--imobench", type=Path, required=True, help=f"a clone of {IMOBENCH[0]}")
    b.add_argument("--math", type=Path, required=True, help=f"a clone of {MATH[0]}")
    b.add_argument("--out", type=Path, required=True)
    k = sub.add_parser("pick", help="print the seeded choice of fixture rows")
    k.add_argument("--external", type=Path, required=True, help="the file `build` wrote")
    k.add_argument("--corpora", type=Path, default=Path("..") / "shared" / "data" / "corpora")
    k.add_argument("--round", type=int, choices=(2, 3, 4, 5, 6, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26),
                   default=2,
                   help="which fixture's choice to print")
    args = p.parse_args(argv)
    build(args) if args.cmd == "build" else pick(args)


if __name__ == "__main__":
    main()
