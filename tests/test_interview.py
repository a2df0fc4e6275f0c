"""Chapter 10's question bank (gpusim/labs/interview.yaml): 20 questions per level, answers that check, and a
link from every answer to a heading that exists in the notebook it names, with the anchor JupyterLab and the
static site (myst, course/conf.py) both give that heading."""
from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from gpusim.api.errors import InputError
from gpusim.labs import interview as iv

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"
NOTEBOOKS = sorted(COURSE.glob("*.ipynb")) + sorted((ROOT / "labs").glob("*/solution.ipynb"))
Q = iv.load()


def headings(path: Path) -> list[str]:
    return iv.notebook_headings(json.loads(path.read_text(encoding="utf-8"))["cells"])


def test_twenty_questions_per_level():
    counts = collections.Counter(q.level for q in Q)
    assert {lv: counts[lv] for lv in iv.LEVELS} == {"初级": 20, "中级": 20, "高级": 20}
    assert len({q.id for q in Q}) == len(Q) == 60


@pytest.mark.parametrize("q", Q, ids=[q.id for q in Q])
def test_every_link_resolves_to_one_heading_of_its_notebook(q):
    target = (COURSE / q.notebook).resolve()
    assert target.exists(), f"{q.id}: {q.notebook} does not exist"
    anchors = [iv.anchor(h) for h in headings(target)]
    assert anchors.count(iv.anchor(q.heading)) == 1, f"{q.id}: no single heading {q.heading!r} in {q.notebook}"
    assert q.url == f"{q.notebook}#{iv.anchor(q.heading)}" and " " not in q.url and ")" not in q.url


@pytest.mark.parametrize("q", Q, ids=[q.id for q in Q])
def test_the_answer_checks_and_the_others_do_not(q):
    assert iv.check(q, q.correct)[0]
    assert iv.check(q, f" {q.correct.lower()} ")[0]                   # case and spaces do not matter
    if q.kind == "choice":
        wrong = [c for c in iv.LETTERS[:len(q.options)] if c != q.correct]
        assert wrong and not any(iv.check(q, c)[0] for c in wrong)
        assert sorted(q.shown_options) == sorted(q.options)           # shuffled, nothing lost
    else:
        assert all(iv.check(q, a)[0] for a in q.answer) and not iv.check(q, "42x")[0]
    assert not iv.check(q, None)[0] and not iv.check(q, "")[0]


def test_option_order_is_fixed_by_the_id_and_hides_the_answer():
    again = iv.load()
    assert [q.order for q in again] == [q.order for q in Q]
    letters = collections.Counter(q.correct for q in Q if q.kind == "choice")
    assert max(letters.values()) <= 0.4 * sum(letters.values()), letters


def test_every_reference_answer_ties_the_three_parts_and_names_source():
    for q in Q:
        assert all(p in q.explanation for p in iv.PARTS), q.id
        source = q.explanation.split("**源码**", 1)[1]
        assert "gpusim" in source or "pkg/" in source or ".go" in source, q.id


def test_heading_text_is_what_myst_titles_the_heading():
    """myst's slug function gets the heading's text and code_inline children; JupyterLab uses textContent."""
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark")
    for path in NOTEBOOKS:
        for h in headings(path):
            inline = md.parse("# " + h)[1]
            title = "".join(c.content for c in inline.children if c.type in ("text", "code_inline"))
            assert iv.heading_text(h) == title, (path.name, h)


def test_site_uses_the_same_anchors():
    conf = (COURSE / "conf.py").read_text(encoding="utf-8")
    assert 'myst_heading_slug_func = "gpusim.labs.interview.heading_anchor"' in conf
    assert iv.anchor("3. 排队：卡不够时会发生什么") == "3.-排队：卡不够时会发生什么"
    assert iv.anchor("Kubernetes 原生 gang scheduling（**alpha**，1.35）") == "Kubernetes-原生-gang-scheduling（alpha，1.35）"


def test_the_chapter_shows_every_question_as_committed():
    nb = json.loads((COURSE / "10-interview.ipynb").read_text(encoding="utf-8"))
    shown = ["".join(o["data"]["text/markdown"]) for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    missing = [q.id for q in Q if iv.markdown(q) not in shown]
    assert not missing, f"re-execute course/10-interview.ipynb: {missing}"
    assert nb["metadata"].get("mystnb", {}).get("render_markdown_format") == "myst"   # links resolved on the site


def test_static_markdown_holds_question_options_answer_and_link():
    q = iv.find(Q, "J-11")
    text = iv.markdown(q)
    assert q.question in text and "<details><summary>参考答案</summary>" in text and text.endswith("</details>")
    assert "**答案：20480**" in text and f"]({q.url})" in text
    c = iv.find(Q, "S-01")
    assert all(f"**{iv.LETTERS[i]}.** {o}" in iv.markdown(c) for i, o in enumerate(c.shown_options))


GOOD = {"id": "J-99", "level": "初级", "topic": "t", "kind": "choice", "question": "q?", "options": ["a", "b"],
        "answer": "A", "explanation": "**资源模型**：x\n**调度语义**：y\n**源码**：z",
        "link": {"notebook": "04-workflow.ipynb", "heading": "1. x"}}


@pytest.mark.parametrize("change, field, message", [
    ({"level": "专家"}, "level", 'Unsupported value: "专家"'),
    ({"id": "M-01"}, "id", 'a 初级 question is J-NN'),
    ({"answer": "C"}, "answer", 'must be one of the options\' letters A, B'),
    ({"options": ["a"]}, "options", "a choice needs 2 to 8 options"),
    ({"kind": "short", "answer": ["1"]}, "options", "a short answer has no options"),
    ({"kind": "short", "options": None, "answer": "1"}, "answer", "a list of accepted answers"),
    ({"explanation": "**资源模型**：x **调度语义**：y"}, "explanation", "missing **源码**"),
    ({"link": {"notebook": "04-workflow.ipynb"}}, "link", "must be {notebook, heading}"),
    ({"hint": "x"}, "hint", 'unknown field "hint"'),
    ({"topic": ""}, "topic", "Required value"),
])
def test_bad_questions_name_file_question_and_field(change, field, message):
    bad = {**GOOD, **change}
    with pytest.raises(InputError) as e:
        iv.parse([GOOD | {"id": "J-98"}, bad])
    text = str(e.value)
    assert text.startswith(f'error: interview.yaml, document 2: Question "{bad["id"]}" is invalid: {field}: ')
    assert message in text


def test_duplicate_ids_are_refused():
    with pytest.raises(InputError, match='Duplicate value: "J-99"'):
        iv.parse([GOOD, GOOD])


def test_chapter_labels():
    assert [iv.chapter_label(n) for n in ("02-1-resource-model.ipynb", "04-workflow.ipynb",
                                           "../labs/08-write-a-plugin/solution.ipynb")] == ["02.1", "04", "实验 08"]
