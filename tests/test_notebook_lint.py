"""What a learner reads: no placeholder text, every section ends with 小结 and 练习, links that resolve,
executed outputs, and cells that call gpusim instead of holding logic (CONVENTIONS.md)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "course").glob("*.ipynb"))
SOLUTIONS = sorted((ROOT / "labs").glob("*/solution.ipynb"))
STUDENT = sorted((ROOT / "labs").glob("*/lab.ipynb"))
MARKDOWN = sorted((ROOT / "course").glob("*.md")) + sorted((ROOT / "labs").rglob("*.md")) + [ROOT / "README.md"]

# Words of unfinished work (Chinese and English), matched case-insensitively in everything a learner reads.
PLACEHOLDERS = ("编写中", "待补充", "待完成", "后续更新", "后续补充", "后续补上", "随后补", "留待", "本节随", "敬请期待",
                "coming soon", "not yet written", "to be written", "TODO", "TBD", "FIXME", "(yet)", "placeholder")
MAX_FUNCTION_LINES = 6   # a cell may define a tiny helper (a widget callback); logic belongs in gpusim


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"])


def headings(path: Path) -> list[str]:
    return [line for c in cells(path) if c["cell_type"] == "markdown"
            for line in text(c).splitlines() if line.startswith("#")]


def ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


@pytest.mark.parametrize("path", CHAPTERS + SOLUTIONS + STUDENT + MARKDOWN, ids=ids(CHAPTERS + SOLUTIONS + STUDENT + MARKDOWN))
def test_no_placeholder_text(path):
    if path.suffix == ".ipynb":
        body = "\n".join(text(c) for c in cells(path) if c["cell_type"] == "markdown")
    else:
        body = path.read_text(encoding="utf-8")
    found = [w for w in PLACEHOLDERS if re.search(re.escape(w), body, flags=0 if w.isupper() else re.I)]
    assert not found, f"{path.name} reads as unfinished: {found}"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids(CHAPTERS))
def test_section_ends_with_summary_and_exercises(path):
    level2 = [h for h in headings(path) if h.startswith("## ")]
    assert level2[-2:] == ["## 小结", "## 练习"], f"{path.name}: last sections are {level2[-2:]}"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids(CHAPTERS))
def test_first_code_cell_sets_up(path):
    first = next(c for c in cells(path) if c["cell_type"] == "code")
    assert text(first).strip() == "import gpusim as gs\ngs.setup()"


@pytest.mark.parametrize("path", CHAPTERS + SOLUTIONS, ids=ids(CHAPTERS + SOLUTIONS))
def test_cells_hold_no_logic(path):
    """Logic lives in gpusim. In a lab the learner's answer (a ### BEGIN SOLUTION block) and plugin classes
    (lab 08 is about writing one) are the content, not logic to move."""
    long = []
    in_lab = path.parent.parent.name == "labs"
    for i, c in enumerate(cells(path)):
        if c["cell_type"] != "code" or (in_lab and "### BEGIN SOLUTION" in text(c)):
            continue
        src = "\n".join(line for line in text(c).splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            if in_lab and isinstance(node, ast.ClassDef):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"cell {i}: {node.name} ({n} lines)")
    assert not long, f"{path.name}: move these into gpusim: {long}"


@pytest.mark.parametrize("path", CHAPTERS + SOLUTIONS, ids=ids(CHAPTERS + SOLUTIONS))
def test_executed_without_errors(path):
    for i, c in enumerate(cells(path)):
        if c["cell_type"] != "code" or not text(c).strip():
            continue
        assert c["execution_count"] is not None, f"{path.name} cell {i} was not executed"
        tags = c.get("metadata", {}).get("tags", [])
        if "raises-exception" not in tags:
            assert not [o for o in c["outputs"] if o["output_type"] == "error"], f"{path.name} cell {i} has an error"


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", CHAPTERS + SOLUTIONS + STUDENT + MARKDOWN, ids=ids(CHAPTERS + SOLUTIONS + STUDENT + MARKDOWN))
def test_relative_links_resolve(path):
    if path.suffix == ".ipynb":
        body = "\n".join(text(c) for c in cells(path) if c["cell_type"] == "markdown")
    else:
        body = path.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(body):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        file = unquote(target.split("#", 1)[0])
        if file and not (path.parent / file).exists():
            broken.append(target)
    assert not broken, f"{path.name}: links to missing files: {broken}"


# Every numbered exercise of a chapter has a collapsed reference answer right after the 练习 cell: one markdown
# cell per exercise, in order, "<details><summary>练习 N 参考答案</summary> … </details>", each optionally followed by
# hidden code cells tagged "answer" that compute and assert the answer (so CI keeps it true).
# Chapters whose answers another branch is writing; the lead empties this list once they are merged.
ANSWERS_PENDING: set[str] = set()
ANSWER_HEAD = re.compile(r"<details><summary>练习 (\d+) 参考答案</summary>")
ANSWER_CODE_META = {"source_hidden": True, "outputs_hidden": True}


def exercises(path: Path) -> tuple[int, list[int]]:
    """Index of the 练习 cell and the numbers of its top-level list items."""
    cs = cells(path)
    i = max(k for k, c in enumerate(cs) if c["cell_type"] == "markdown" and "## 练习" in text(c).splitlines())
    body = text(cs[i]).split("## 练习", 1)[1]
    return i, [int(m) for m in re.findall(r"^(\d+)\. ", body, flags=re.M)]


@pytest.mark.parametrize("path", CHAPTERS, ids=ids(CHAPTERS))
def test_every_exercise_has_a_collapsed_answer(path):
    if path.name in ANSWERS_PENDING:
        pytest.skip("answers pending on another branch (ANSWERS_PENDING)")
    i, numbers = exercises(path)
    assert numbers and numbers == list(range(1, len(numbers) + 1)), f"{path.name}: exercises numbered {numbers}"
    answered, previous = [], None
    for k, c in enumerate(cells(path)[i + 1:], start=i + 1):
        if c["cell_type"] == "markdown":
            m = ANSWER_HEAD.match(text(c))
            assert m, f"{path.name} cell {k}: after 练习 only answers may follow"
            assert text(c).rstrip().endswith("</details>"), f"{path.name} cell {k}: answer not closed by </details>"
            answered.append(int(m.group(1)))
        else:
            meta = c.get("metadata", {})
            assert "answer" in meta.get("tags", []), f"{path.name} cell {k}: code after 练习 must be tagged answer"
            assert meta.get("jupyter", {}) == ANSWER_CODE_META, f"{path.name} cell {k}: answer code must be hidden"
            assert previous is not None, f"{path.name} cell {k}: answer code before any answer"
        previous = c
    assert answered == numbers, f"{path.name}: answers {answered} for exercises {numbers}"


@pytest.mark.parametrize("path", CHAPTERS, ids=ids(CHAPTERS))
def test_answer_cells_only_after_the_exercises(path):
    i = max((k for k, c in enumerate(cells(path)) if c["cell_type"] == "markdown"
             and "## 练习" in text(c).splitlines()), default=-1)
    early = [k for k, c in enumerate(cells(path)[:i + 1]) if "answer" in c.get("metadata", {}).get("tags", [])
             or (c["cell_type"] == "markdown" and ANSWER_HEAD.match(text(c)))]
    assert not early, f"{path.name}: answer cells before the 练习 cell: {early}"
