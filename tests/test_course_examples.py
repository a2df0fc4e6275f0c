"""Scenarios a chapter shows as YAML in its prose and runs through a gpusim helper stay the same scenario."""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from gpusim.experiments.guide import GUIDE_SCENARIO

ROOT = Path(__file__).resolve().parents[1]


def yaml_blocks(notebook: str) -> list[str]:
    cells = json.loads((ROOT / "course" / notebook).read_text(encoding="utf-8"))["cells"]
    body = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.findall(r"```yaml\n(.*?)```", body, flags=re.S)


def test_guide_yaml_is_the_scenario_its_answers_run():
    (block,) = yaml_blocks("00-guide.ipynb")
    assert list(yaml.safe_load_all(block)) == list(yaml.safe_load_all(GUIDE_SCENARIO))
