"""Writes the KernelBench-X facts the suite tests check against, from KernelBench-X's task list and
task definitions: each task's category, name, difficulty and signature (kernelbenchx_tasks.tsv), and
a hash of every run of 8 words in its description and inputs text (kernelbenchx_shingles.txt), so a
test can find copied wording without the repository holding KernelBench-X's text.
Usage: python tests/tasks/data/make_kernelbenchx_data.py TASKS_TSV KERNELBENCHX_V1_JSON"""

import csv
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHINGLE_WORDS = 8


def shingle_hash(words: list[str]) -> str:
    return hashlib.sha256(" ".join(words).encode()).hexdigest()[:12]


def shingles(text: str) -> set[str]:
    words = text.split()
    return {shingle_hash(words[i:i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)}


def main(tasks_tsv: str, definitions_json: str) -> None:
    with open(tasks_tsv) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    with open(HERE / "kernelbenchx_tasks.tsv", "w", newline="") as f:
        writer = csv.DictWriter(f, ["category", "task", "difficulty", "signature"], delimiter="\t",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: r[k] for k in writer.fieldnames} for r in rows)
    hashes = set()
    for definition in json.loads(Path(definitions_json).read_text()):
        hashes |= shingles(definition.get("description", "") + " " + definition.get("func_inputs", ""))
    (HERE / "kernelbenchx_shingles.txt").write_text("".join(h + "\n" for h in sorted(hashes)))


if __name__ == "__main__":
    main(*sys.argv[1:])
