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


def load_errors(cases: dict[str, str], file: str = "pod.yaml") -> dict[str, str]:
    """label → the InputError text for each scenario text (loaded as the file ``file``) that does not load
    (valid ones are left out)."""
    errors = {}
    for label, text in cases.items():
        try:
            load(texts=[(file, text)])
        except InputError as e:
            errors[label] = str(e)
    return errors


def request_errors(cases: dict[str, str]) -> dict[str, str]:
    """label → the InputError text for a one-container Pod (:func:`pod_yaml`) with each ``resources`` mapping."""
    return load_errors({label: pod_yaml(resources) for label, resources in cases.items()})


def format_load_errors(errors: dict[str, str]) -> str:
    """Each case's label and, indented under it, the error ``load_errors`` collected."""
    return "\n\n".join(f"{label}:\n  {e}" for label, e in errors.items())
