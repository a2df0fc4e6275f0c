"""Validation demos: load small scenarios the way ``kubectl apply`` would send them and collect what the
apiserver's validation says (chapter 02.1's table of extended-resource rules)."""
from __future__ import annotations

from ..api.errors import InputError
from ..cluster.scenario import load


def pod_yaml(resources: str, name: str = "trainer") -> str:
    """A one-container Pod whose ``resources`` is the given YAML flow mapping, e.g.
    ``"{limits: {nvidia.com/gpu: 2}}"``."""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - {{name: c, image: pytorch/pytorch, resources: {resources}}}
"""


def load_errors(cases: dict[str, str]) -> dict[str, str]:
    """label → the InputError text for each scenario text that does not load (valid ones are left out)."""
    errors = {}
    for label, text in cases.items():
        try:
            load(texts=[("pod.yaml", text)])
        except InputError as e:
            errors[label] = str(e)
    return errors
