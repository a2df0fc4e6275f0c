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

Lab 08 (write a Score plugin) adds :mod:`~gpusim.labs.outoftree` (a scheduler built with out-of-tree
plugins, as ``app.WithPlugin`` does), :mod:`~gpusim.labs.fragmentation` (its workload and FGD's
fragmentation measure), :mod:`~gpusim.labs.gpuclustering` (the worked example of chapter 07) and
:mod:`~gpusim.labs.plugincheck` (``check_plugin``). Labs 05 and 06 add :mod:`~gpusim.labs.bringup` and
:mod:`~gpusim.labs.admission` (their fixes as edits of the scenario); lab 04 adds :mod:`~gpusim.labs.allreduce`
(the job at another size, the Kueue TAS and Volcano HyperNode fixes); lab 07 adds :mod:`~gpusim.labs.migconfig`;
lab 09 adds :mod:`~gpusim.labs.dramig` (``check_dra_mig`` and the views of which MIG device each container got),
:mod:`~gpusim.labs.computedomain` (``check_compute_domain``) and :mod:`~gpusim.labs.mnnvl` (NCCL's MNNVL check).
"""
from __future__ import annotations

from . import (admission, allreduce, bringup, computedomain, dramig, fragmentation, gpuclustering, migconfig, mnnvl,
               outoftree)
from .checks import (CheckResult, allreduce_reference, check_admission, check_allreduce, check_bring_up,
                     check_fairness, check_gang, check_inference_oom, check_mig)
from .computedomain import check_compute_domain
from .dramig import check_dra_mig
from .fragmentation import (TARGET, compare, fgd_score, format_comparison, fragmentation_report, node_fragmentation,
                            plugin_workload, with_priority_class)
from .outoftree import build, with_plugin
from .plugincheck import PLUGIN_SEEDS, check_plugin, plugin_baseline
from .notebook import STUB, make_student, student_text


_PLOTS = ("plot_gpu_memory", "plot_fragmentation_over_time", "plot_fragmentation_by_seed", "fragmentation_widget",
          "plot_allreduce_cliff")


def __getattr__(name: str):
    # the plotting helper imports matplotlib; load it on first use (PEP 562) so the CLI starts fast
    if name in _PLOTS:
        from . import plots
        return getattr(plots, name)
    if name in ("fairness_report", "with_preemptable_training", "gang_report", "job_failures"):
        from . import report
        return getattr(report, name)
    raise AttributeError(f"module 'gpusim.labs' has no attribute {name!r}")


__all__ = ["CheckResult", "check_admission", "check_allreduce", "allreduce_reference", "allreduce", "check_bring_up",
           "check_mig", "migconfig", "check_dra_mig", "dramig", "check_compute_domain", "computedomain", "mnnvl", "check_fairness", "check_gang", "check_inference_oom", "STUB", "make_student", "student_text",
           "plot_gpu_memory", "admission", "bringup", "fragmentation", "gpuclustering", "outoftree", "TARGET", "fgd_score",
           "fragmentation_report", "node_fragmentation", "plugin_workload", "build", "with_plugin", "PLUGIN_SEEDS",
           "check_plugin", "plugin_baseline", "compare", "with_priority_class", "format_comparison", "plot_fragmentation_over_time",
           "plot_fragmentation_by_seed", "fragmentation_widget", "plot_allreduce_cliff", "fairness_report", "with_preemptable_training",
           "gang_report", "job_failures"]
