"""Chapter 10's interview questions (面试题): the question bank, the self-check, and how a question is shown.

The questions live in ``interview.yaml`` next to this module (60 of them: 20 初级, 20 中级, 20 高级). Each is
either a choice (options, one correct) or a short answer (a list of accepted spellings), has a reference answer
that ties the resource model, the scheduling semantics and the source code together, and links to the runnable
section of the course that demonstrates it: a notebook and the text of one of its headings.

:func:`show` displays, for every question, a Markdown block — the question, its options and the reference
answer collapsed in ``<details>`` — that any reader sees without a kernel (GitHub, nbviewer, the static site),
followed by a small widget that checks the learner's choice (:func:`check`, also callable directly). Options
are shown in an order drawn from the question's id, so the position of the correct one carries no hint.

Heading anchors are formed as JupyterLab forms them (``rendermime``'s ``createHeaderId``: the heading's text
with every space replaced by ``-``); the static site's myst parser is configured with the same function
(``course/conf.py``: ``myst_heading_slug_func``), so one link works in both.

Mirrors no upstream code: it is course tooling (the questions cite the upstream files they are about).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Optional, Sequence

import yaml

from ..api.errors import InputError, Source

DATA = "interview.yaml"
LEVELS = ("初级", "中级", "高级")
ID_PREFIX = {"初级": "J", "中级": "M", "高级": "S"}
KINDS = ("choice", "short")
LETTERS = "ABCDEFGH"
PARTS = ("**资源模型**", "**调度语义**", "**源码**")     # every reference answer ties these together
FIELDS = ("id", "level", "topic", "kind", "question", "options", "answer", "explanation", "link")
NO_KERNEL = ("自检控件：在运行中的 Jupyter 里选一个答案、点“检查”；没有内核时，上面是题目、选项和折叠的参考答案。")


@dataclass(frozen=True)
class Question:
    id: str
    level: str
    topic: str
    kind: str
    question: str
    options: tuple[str, ...]           # as written in the YAML (empty for a short answer)
    answer: tuple[str, ...]            # choice: (letter,) of the written order; short: accepted answers
    explanation: str
    notebook: str                      # relative to course/
    heading: str                       # a heading's Markdown text, without the leading #s

    @property
    def order(self) -> list[int]:
        """The written options' indices in the order they are shown (fixed by the id)."""
        idx = list(range(len(self.options)))
        random.Random(self.id).shuffle(idx)
        return idx

    @property
    def shown_options(self) -> list[str]:
        return [self.options[i] for i in self.order]

    @property
    def correct(self) -> str:
        """The correct answer as shown: a letter of the shown order, or the first accepted short answer."""
        if self.kind == "short":
            return self.answer[0]
        return LETTERS[self.order.index(LETTERS.index(self.answer[0]))]

    @property
    def url(self) -> str:
        return f"{self.notebook}#{anchor(self.heading)}"


# --- headings and anchors ---------------------------------------------------------------------------------

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPH = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"(`+)(.+?)\1")


def heading_text(markdown: str) -> str:
    """The text a browser shows for a Markdown heading: no leading ``#``, no code ticks, ``*``/``**``
    emphasis or link targets (what the DOM's ``textContent`` holds, and what myst passes to the slug
    function). Code spans are kept verbatim."""
    text = markdown.lstrip("#").strip()
    parts = _CODE.split(text)          # [prose, ticks, code, prose, ticks, code, …]
    out = []
    for i, part in enumerate(parts):
        if i % 3 == 0:
            part = _LINK.sub(r"\1", part)
            prev = None
            while prev != part:
                prev, part = part, _EMPH.sub(r"\2", part)
            out.append(part)
        elif i % 3 == 2:
            out.append(part.strip() if part.strip() else part)
    return "".join(out)


def heading_anchor(text: str) -> str:
    """JupyterLab's heading id (``createHeaderId``): the heading text with each space replaced by ``-``.
    ``course/conf.py`` gives it to myst as ``myst_heading_slug_func``."""
    return text.replace(" ", "-")


def anchor(heading: str) -> str:
    """The anchor of a heading written in Markdown."""
    return heading_anchor(heading_text(heading))


def notebook_headings(cells: Sequence[dict]) -> list[str]:
    """The Markdown headings (without ``#``) of a notebook's cells, in order."""
    out = []
    for c in cells:
        if c.get("cell_type") == "markdown":
            src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            fence = False
            for line in src.splitlines():
                if line.startswith("```"):
                    fence = not fence
                elif not fence and re.match(r"#{1,6} ", line):
                    out.append(line.split(" ", 1)[1].strip())
    return out


def chapter_label(notebook: str) -> str:
    """``02-1-resource-model.ipynb`` → ``02.1``; ``04-workflow.ipynb`` → ``04``; a lab's solution → ``实验 08``."""
    m = re.match(r"^\.\./labs/(\d+)-", notebook)
    if m:
        return f"实验 {m.group(1)}"
    m = re.match(r"^(\d+)(?:-(\d+))?-", notebook)
    if not m:
        return notebook
    return m.group(1) + (f".{m.group(2)}" if m.group(2) else "")


# --- loading ----------------------------------------------------------------------------------------------

def _err(source: str, i: int, qid: str, field: str, message: str) -> InputError:
    return InputError(message, Source(source, i + 1), "Question", "", qid, field)


def parse(items: Any, source: str = DATA) -> list[Question]:
    """The question bank from its YAML form (a list of mappings); errors name the file, the question and
    the field."""
    if not isinstance(items, list):
        raise InputError("expected a list of questions", Source(source, 1))
    out: list[Question] = []
    seen: set[str] = set()
    for i, d in enumerate(items):
        qid = str(d.get("id", "")) if isinstance(d, dict) else ""
        if not isinstance(d, dict):
            raise _err(source, i, qid, "", "expected a mapping")
        unknown = sorted(set(d) - set(FIELDS))
        if unknown:
            raise _err(source, i, qid, unknown[0], f'strict decoding error: unknown field "{unknown[0]}"')
        for f in ("id", "level", "topic", "kind", "question", "answer", "explanation", "link"):
            if not d.get(f):
                raise _err(source, i, qid, f, "Required value")
        if qid in seen:
            raise _err(source, i, qid, "id", f'Duplicate value: "{qid}"')
        seen.add(qid)
        level, kind = d["level"], d["kind"]
        if level not in LEVELS:
            raise _err(source, i, qid, "level", f'Unsupported value: "{level}": supported values: {", ".join(LEVELS)}')
        if not re.fullmatch(ID_PREFIX[level] + r"-\d{2}", qid):
            raise _err(source, i, qid, "id", f'Invalid value: "{qid}": a {level} question is {ID_PREFIX[level]}-NN')
        if kind not in KINDS:
            raise _err(source, i, qid, "kind", f'Unsupported value: "{kind}": supported values: choice, short')
        options = tuple(str(o) for o in d.get("options") or ())
        if kind == "choice":
            if not 2 <= len(options) <= len(LETTERS):
                raise _err(source, i, qid, "options", f"Invalid value: a choice needs 2 to {len(LETTERS)} options")
            if str(d["answer"]) not in LETTERS[:len(options)]:
                raise _err(source, i, qid, "answer", f'Invalid value: "{d["answer"]}": must be one of the options\' '
                           f"letters {', '.join(LETTERS[:len(options)])}")
            answer: tuple[str, ...] = (str(d["answer"]),)
        else:
            if options:
                raise _err(source, i, qid, "options", "Forbidden: a short answer has no options")
            if not isinstance(d["answer"], list) or not all(isinstance(a, (str, int, float)) for a in d["answer"]):
                raise _err(source, i, qid, "answer", "Invalid value: a short answer is a list of accepted answers")
            answer = tuple(str(a) for a in d["answer"])
        missing = [p for p in PARTS if p not in d["explanation"]]
        if missing:
            raise _err(source, i, qid, "explanation", f"Required value: the reference answer ties together {', '.join(PARTS)}; "
                       f"missing {', '.join(missing)}")
        link = d["link"]
        if not isinstance(link, dict) or set(link) != {"notebook", "heading"}:
            raise _err(source, i, qid, "link", "Invalid value: must be {notebook, heading}")
        out.append(Question(qid, level, str(d["topic"]), kind, str(d["question"]).strip(), options, answer,
                            str(d["explanation"]).strip(), str(link["notebook"]), str(link["heading"])))
    return out


def load(text: Optional[str] = None) -> list[Question]:
    """The question bank shipped with gpusim (or the YAML ``text``)."""
    if text is None:
        text = resources.files(__package__).joinpath(DATA).read_text(encoding="utf-8")
    try:
        items = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(f"YAML syntax error: {e}", Source(DATA, 1)) from None
    return parse(items)


def by_level(questions: Sequence[Question], level: str) -> list[Question]:
    if level not in LEVELS:
        raise ValueError(f'unknown level "{level}": supported values: {", ".join(LEVELS)}')
    return [q for q in questions if q.level == level]


def find(questions: Sequence[Question], qid: str) -> Question:
    for q in questions:
        if q.id == qid:
            return q
    raise KeyError(f"no question {qid!r}")


# --- checking ---------------------------------------------------------------------------------------------

def _normal(s: Any) -> str:
    return re.sub(r"\s+", "", str(s)).lower().rstrip("。.")


def check(q: Question, given: Any) -> tuple[bool, str]:
    """Whether ``given`` answers ``q`` (a shown letter for a choice, any accepted spelling for a short answer,
    case and spaces ignored), and a one-line verdict."""
    if given is None or not str(given).strip():
        return False, "先选一个答案（或填一个答案）。"
    if q.kind == "choice":
        ok = _normal(given) == q.correct.lower()
    else:
        ok = _normal(given) in {_normal(a) for a in q.answer}
    where = f"{chapter_label(q.notebook)} · {heading_text(q.heading)}"
    return ok, (f"✓ 正确（{q.correct}）。展开上面的参考答案，看它怎样把资源模型、调度语义和源码连起来。" if ok
                else f"✗ 不对，再想想。可以回到 {where} 重新运行那一节。")


# --- display ----------------------------------------------------------------------------------------------

def markdown(q: Question) -> str:
    """The question as static Markdown: title, question, options, and the collapsed reference answer with the
    link to the section that demonstrates it."""
    lines = [f"**{q.id}**（{q.level} · {q.topic}）{q.question}", ""]
    if q.kind == "choice":
        lines += [f"- **{LETTERS[i]}.** {o}" for i, o in enumerate(q.shown_options)]
    else:
        lines.append("（简答：填一个数或一个名字）")
    where = f"[{chapter_label(q.notebook)} · {heading_text(q.heading)}]({q.url})"
    expl = q.explanation.replace("\n", "\n\n")
    lines += ["", "<details><summary>参考答案</summary>", "", f"**答案：{q.correct}**", "", expl, "",
              f"**动手验证**：{where}", "", "</details>"]
    return "\n".join(lines)


def _shared() -> dict:
    """One Layout and one Style per kind of control, shared by every question's widget (each is a widget
    model of its own; sixty questions need not save sixty copies of the same defaults)."""
    import ipywidgets as w
    from ipywidgets.widgets.widget_string import HTMLStyle, TextStyle
    return {"toggle": (w.Layout(width="auto"), w.ToggleButtonsStyle(button_width="3em")),
            "text": (w.Layout(width="12em"), TextStyle()), "button": (w.Layout(width="5em"), w.ButtonStyle()),
            "html": (w.Layout(), HTMLStyle()), "box": (w.Layout(align_items="center"), None)}


def widget(q: Question, shared: Optional[dict] = None):
    """A one-line self-check: the shown letters (or a text box), a 检查 button and the verdict."""
    import ipywidgets as w
    s = shared or _shared()
    if q.kind == "choice":
        pick = w.ToggleButtons(options=list(LETTERS[:len(q.options)]), value=None, layout=s["toggle"][0],
                               style=s["toggle"][1], tooltips=[f"{q.id} {c}" for c in LETTERS[:len(q.options)]])
    else:
        pick = w.Text(placeholder=f"{q.id} 你的答案", layout=s["text"][0], style=s["text"][1])
    button = w.Button(description="检查", tooltip=f"检查 {q.id}", layout=s["button"][0], style=s["button"][1])
    verdict = w.HTML(layout=s["html"][0], style=s["html"][1])

    def on_click(_):
        ok, msg = check(q, pick.value)
        verdict.value = f'<span style="color:{"#2e7d32" if ok else "#c62828"}">{msg}</span>'
    button.on_click(on_click)
    return w.HBox([pick, button, verdict], layout=s["box"][0])


def show(questions: Sequence[Question], level: str) -> None:
    """Display every question of ``level``: its static Markdown, then its self-check widget."""
    from IPython.display import Markdown, display

    from ..views.display import show_widget
    shared = _shared()
    for q in by_level(questions, level):
        display(Markdown(markdown(q)))
        show_widget(widget(q, shared), NO_KERNEL)


def topic_table(questions: Sequence[Question]) -> str:
    """Markdown: one row per topic, the question ids per level, and the sections they link to."""
    topics: dict[str, dict[str, list[Question]]] = {}
    for q in questions:
        topics.setdefault(q.topic, {lv: [] for lv in LEVELS})[q.level].append(q)
    rows = ["| 主题 | " + " | ".join(LEVELS) + " | 演示的章节 |", "|---" * (len(LEVELS) + 2) + "|"]
    for topic, per in topics.items():
        chapters = sorted({chapter_label(q.notebook) for qs in per.values() for q in qs})
        rows.append(f"| {topic} | " + " | ".join("、".join(q.id for q in per[lv]) or "—" for lv in LEVELS)
                    + f" | {'、'.join(chapters)} |")
    return "\n".join(rows)
