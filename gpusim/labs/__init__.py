"""Lab tooling: generate the student notebook from a lab's solution, and check a lab's outcome.

A lab (``labs/NN-slug/``) is written once, as ``solution.ipynb`` with nbgrader-style markers — the same
convention nbgrader's ``ClearSolutions`` preprocessor uses:

    ### BEGIN SOLUTION
    ...the reference answer...
    ### END SOLUTION

``python -m gpusim.labs`` turns every ``solution.ipynb`` into the student copy ``lab.ipynb`` (each block
becomes ``raise NotImplementedError``, outputs are cleared); ``--check`` only compares and fails when a
student copy is stale. Checkers (:mod:`gpusim.labs.checks`) read a finished simulation and say whether
the learner reproduced or fixed the failure; they live here so they are unit-tested like the rest.
"""
from __future__ import annotations

from .checks import CheckResult, check_fairness, check_gang, check_inference_oom
from .notebook import STUB, make_student, student_text


def __getattr__(name: str):
    # the plotting helper imports matplotlib; load it on first use (PEP 562) so the CLI starts fast
    if name == "plot_gpu_memory":
        from .plots import plot_gpu_memory
        return plot_gpu_memory
    if name in ("fairness_report", "with_preemptable_training"):
        from . import report
        return getattr(report, name)
    raise AttributeError(f"module 'gpusim.labs' has no attribute {name!r}")


__all__ = ["CheckResult", "check_fairness", "check_gang", "check_inference_oom", "STUB", "make_student", "student_text", "plot_gpu_memory",
           "fairness_report", "with_preemptable_training"]
