"""Writes the KernelBench-X facts the suite tests check against, from KernelBench-X's task list and
task definitions: each task's category, name, difficulty and signature (kernelbenchx_tasks.tsv), a
hash of every run of 8 words in its description and inputs text (kernelbenchx_shingles.txt), so a
test can find copied wording without the repository holding KernelBench-X's text, and the parameter
list of the function each task's reference module defines (kernelbenchx_definitions.tsv), which is
how KernelBench-X's own tests call a candidate.
Usage: python tests/tasks/data/make_kernelbenchx_data.py TASKS_TSV KERNELBENCHX_V1_JSON [DATA_DIR]
(DATA_DIR: data/kernelbenchx of a KernelBench-X checkout)"""

import ast
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


HARNESS_SEPARATOR = "#" * 146


def definition(module_source: str, name: str) -> str:
    """`name(params)` of the function a reference module defines for task `name` (or its only or
    last function), without annotations: the parameters, their kinds and defaults."""
    tree = ast.parse(module_source.split(HARNESS_SEPARATOR)[0])
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    function = next((f for f in functions if f.name == name), functions[-1])
    return normalized(function)


def normalized(function: ast.FunctionDef) -> str:
    arguments = function.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
        if arg is not None:
            arg.annotation = None
    return f"{function.name}({ast.unparse(arguments)})"


def write_definitions(rows: list[dict], data_dir: Path) -> None:
    with open(HERE / "kernelbenchx_definitions.tsv", "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["category", "task", "definition"])
        for r in rows:
            source = (data_dir / r["category"] / f"{r['task']}.py").read_text()
            writer.writerow([r["category"], r["task"], definition(source, r["task"])])


def main(tasks_tsv: str, definitions_json: str, data_dir: str | None = None) -> None:
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
    if data_dir:
        write_definitions(rows, Path(data_dir))


if __name__ == "__main__":
    main(*sys.argv[1:])
