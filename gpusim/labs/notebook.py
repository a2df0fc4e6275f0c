"""Student notebooks from solution notebooks (mirrors nbgrader's ClearSolutions + ClearOutput).

Every code region from a ``### BEGIN SOLUTION`` line to its ``### END SOLUTION`` line (both included)
becomes one line ``raise NotImplementedError  # 你的代码`` at the BEGIN line's indentation; all code
cells lose their outputs and execution counts, so the student copy is small and never stale-looking.
The reference answers to the exercises are left out of the student copy (nbgrader drops hidden tests the
same way): every markdown cell that opens with ``<details><summary>练习`` and every code cell tagged
``answer`` (the check that keeps an answer true).

Command line (run from the repository root)::

    python -m gpusim.labs            # write labs/*/lab.ipynb
    python -m gpusim.labs --check    # exit 1 and name every lab.ipynb that differs from its solution
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = "raise NotImplementedError  # 你的代码"
ANSWER_TAG = "answer"                      # a code cell that computes and asserts an exercise's answer
ANSWER_OPENING = "<details><summary>练习"   # a collapsed reference answer to an exercise
SOLUTION_NAME = "solution.ipynb"
STUDENT_NAME = "lab.ipynb"


def clear_solutions(source: str, where: str = "cell") -> str:
    """Replace each BEGIN/END SOLUTION region of one code cell's source with the stub line."""
    out: list[str] = []
    inside = False
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise ValueError(f"{where}: nested {BEGIN!r}")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + STUB)
        elif stripped == END:
            if not inside:
                raise ValueError(f"{where}: {END!r} without {BEGIN!r}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{where}: {BEGIN!r} without {END!r}")
    return "\n".join(out)


def is_answer(cell) -> bool:
    """A reference answer to an exercise: a ``<details><summary>练习 …`` markdown cell or an ``answer``-tagged
    code cell."""
    if cell.cell_type == "markdown":
        return cell.source.lstrip().startswith(ANSWER_OPENING)
    return cell.cell_type == "code" and ANSWER_TAG in cell.get("metadata", {}).get("tags", [])


def make_student(solution_path: str | Path) -> nbformat.NotebookNode:
    """The student notebook for one ``solution.ipynb``: reference answers removed, solutions stubbed, outputs
    cleared."""
    nb = nbformat.read(str(solution_path), as_version=4)
    nb.cells = [c for c in nb.cells if not is_answer(c)]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        cell.source = clear_solutions(cell.source, where=f"{solution_path} cell {i}")
        cell.outputs = []
        cell.execution_count = None
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)   # widget state belongs to the executed solution only
    return nb


def student_text(solution_path: str | Path) -> str:
    """The exact file content ``lab.ipynb`` should have (what ``nbformat.write`` produces)."""
    text = nbformat.writes(make_student(solution_path))
    return text if text.endswith("\n") else text + "\n"


def solutions(labs_dir: str | Path) -> list[Path]:
    return sorted(Path(labs_dir).glob(f"*/{SOLUTION_NAME}"))


def stale(labs_dir: str | Path) -> list[Path]:
    """The ``lab.ipynb`` files that are missing or differ from what their solution generates."""
    out = []
    for sol in solutions(labs_dir):
        lab = sol.with_name(STUDENT_NAME)
        if not lab.exists() or lab.read_text(encoding="utf-8") != student_text(sol):
            out.append(lab)
    return out


def write_all(labs_dir: str | Path) -> list[Path]:
    written = []
    for sol in solutions(labs_dir):
        lab = sol.with_name(STUDENT_NAME)
        lab.write_text(student_text(sol), encoding="utf-8")
        written.append(lab)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpusim.labs",
                                 description="Generate labs/*/lab.ipynb from labs/*/solution.ipynb.")
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 if any lab.ipynb is stale")
    ap.add_argument("labs_dir", nargs="?", default="labs", help="the labs folder (default: labs)")
    args = ap.parse_args(argv)
    if not Path(args.labs_dir).is_dir():
        print(f"error: {args.labs_dir}: not a directory", file=sys.stderr)
        return 2
    if args.check:
        bad = stale(args.labs_dir)
        for lab in bad:
            print(f"stale: {lab} (regenerate with: python -m gpusim.labs)", file=sys.stderr)
        if not bad:
            print(f"ok: {len(solutions(args.labs_dir))} lab notebook(s) up to date")
        return 1 if bad else 0
    for lab in write_all(args.labs_dir):
        print(f"wrote {lab}")
    return 0
