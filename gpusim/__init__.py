"""gpusim — a simulator of GPU scheduling and resource management on Kubernetes.

The public façade: load a scenario, run it, and look at what happened.

    import gpusim as gs
    gs.setup()
    result = gs.run("examples/lifecycle.yaml")
    print(gs.get_pods(result))
"""
from __future__ import annotations

__version__ = "0.1.0"


def setup(seed: int = 0) -> None:
    """Notebook set-up (like fastbook's setup_book): PNG figures, stable rcParams, numpy seed, and the
    ``gpusim`` command on the kernel's PATH (next to this Python), so ``!gpusim run ...`` works in a cell."""
    import os
    import random
    import sys

    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")

    import matplotlib
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    matplotlib.rcParams.update({"figure.figsize": (9, 3.5), "figure.dpi": 90, "axes.grid": True,
                                "grid.alpha": 0.3, "font.size": 10, "svg.hashsalt": "gpusim"})
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        set_matplotlib_formats("png")
    except Exception:   # outside IPython there is nothing to configure
        pass


from .api.errors import InputError
from .cluster.scenario import Scenario, load, load_profiles
from .cluster.simulation import Result, Simulation, run
from .views.kubectl import (describe_node, describe_pod, events_for, get_events, get_nodes, get_pods, pod_json,
                            scheduled_by, to_json)
from .views.explain import attempts_for, explain_pod
from .views.text import trace_functions, trace_table

# Plotting and widget views import matplotlib and ipywidgets; they load on first use (PEP 562), so the
# command line starts fast.
_LAZY = {
    "gpusim.views.plots": ["gpu_gantt", "lifecycle_chart", "state_at", "node_incidents", "lifecycle_messages",
                           "timeline_instants", "format_state_at", "plot_state_at"],
    "gpusim.views.widgets": ["timeline_slider", "timeline_options"],
    "gpusim.views.architecture": ["component_graph", "component_table", "draw_component_graph",
                                  "draw_extension_point_map", "extension_point_map", "format_extension_point_map",
                                  "layer_table", "draw_layers", "unsimulated_components", "component_layers",
                                  "extension_points_of"],
    "gpusim.views.scoring": ["compare_score_bars", "explain_runs", "explain_widget", "filter_score_scenario",
                             "fragmentation", "fragmentation_scenario", "fragmentation_table", "plot_fragmentation",
                             "score_bars", "scoring_config", "with_node_name_affinity", "with_scoring_strategy"],
    "gpusim.experiments.scoring": ["compare_strategies", "filter_score_demo", "filter_score_widget", "gpus_used_by_weight",
                                   "strategy_widget"],
    "gpusim.views.gang": ["with_coscheduling", "training_summary", "failed_scheduling", "gang_pods", "permit_timeline",
                          "plot_permit_timeline", "with_native_gang_alpha", "pod_group_cycles", "pod_group_cycle_summary"],
    "gpusim.views.tenancy": ["share_steps", "plot_tenant_share", "job_gantt_data", "plot_job_gantt"],
    "gpusim.metrics": ["gpu_share_over_time", "gpu_hours_by_tenant", "cluster_gpu_utilization", "mean_utilization",
                       "queueing_delays", "job_queueing_delays", "job_completion_times", "wasted_gpu_hours",
                       "jain_index", "tenant_fairness", "tenant_by_namespace", "tenant_by_label",
                       "tenant_by_kueue_queue", "tenant_by_volcano_queue", "pod_records"],
    "gpusim.views.volcano": ["volcano_jobs", "pod_group_conditions", "queue_shares", "volcano_summary",
                             "plot_queue_shares", "format_queue_shares", "format_pod_group_conditions",
                             "hyper_nodes", "hypernode_placement", "hypernode_summary"],
    "gpusim.experiments.volcano": ["water_filling", "format_water_filling"],
    "gpusim.experiments.validation": ["format_load_errors", "load_errors", "pod_yaml", "request_errors"],
    "gpusim.experiments.guide": ["GUIDE_SCENARIO", "guide_run"],
    "gpusim.views.kueue": ["kueue_summary", "kueue_workloads", "cluster_queue_usage", "plot_cluster_queue_usage",
                           "topology_assignments", "topology_summary",
                           "describe_workload"],
    "gpusim.experiments.sharing": ["compare_sharing", "sharing_widget"],
    "gpusim.views.diagnose": ["diagnose_pod"],
    "gpusim.views.dra": ["claim_paths", "claim_path_table", "plot_claim_paths", "allocation_rows",
                         "format_allocation_comparison", "plot_allocation_comparison"],
    "gpusim.experiments.dra": ["allocation_scenario", "compare_allocation", "extended_resource_scenario",
                               "compare_extended_resource", "extended_resource_rows",
                               "format_extended_resource_comparison", "extended_resource_claim_status"],
    "gpusim.views.dcgm": ["dcgm_exposition", "dcgm_alerts", "alerts_table", "plot_gpu_metric"],
    "gpusim.records": ["dcgm_samples", "dcgm_series"],
    "gpusim.views.topology": ["draw_node", "draw_group_ring", "plot_run_step_time", "topo_m", "pod_gpus",
                              "training_rows", "group_allreduce", "draw_server", "draw_fabric", "plot_step_time",
                              "plot_cliff"],
    "gpusim.experiments.topology": ["make_cluster", "placement", "allreduce_row", "placement_rows", "cliff_rows",
                                    "explore_allreduce", "allreduce_widget", "placement_scenario",
                                    "compare_placement", "format_placement", "placement_step_rows",
                                    "preferred_allocation_demo", "topology_manager_demo", "nrt_demo", "nrt_zones",
                                    "board_table", "preferred_allocation_rules", "topology_manager_run"],
    "gpusim.views.sharing": ["format_isolation_table", "format_sharing_summary", "gpu_labels", "hami_allocations",
                             "hami_scenario", "isolation_table", "plot_gpu_memory", "mig_layout_widget",
                             "mig_placement_error", "mig_placement_report", "mig_profile_table", "mig_slice_map",
                             "mig_strategy_report", "mps_max_clients", "mps_max_clients_table", "oom_instants", "oom_records",
                             "plot_mig_layouts",
                             "plot_throughput", "plot_throughput_by_demand", "sharing_scenario", "sharing_summary",
                             "sharing_summary_by_mode", "throughput_vs_tenants", "time_slicing_scenario",
                             "vgpu_scenario", "with_sharing_mode"],
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'gpusim' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["attempts_for", "setup", "__version__", "InputError", "Scenario", "load", "Result", "Simulation", "run",
           "describe_node", "describe_pod", "events_for", "get_events", "get_nodes", "get_pods", "pod_json",
           "scheduled_by", "to_json", "gpu_gantt", "lifecycle_chart", "state_at", "trace_functions", "trace_table",
           "timeline_slider"]
__all__ += ["explain_pod", "component_graph", "component_table", "draw_component_graph", "draw_extension_point_map",
            "extension_point_map", "format_extension_point_map", "load_profiles", "compare_strategies", "explain_widget",
            "filter_score_demo", "filter_score_scenario", "filter_score_widget", "fragmentation",
            "fragmentation_scenario", "fragmentation_table", "plot_fragmentation", "score_bars", "scoring_config",
            "strategy_widget", "with_scoring_strategy"]

__all__ += sorted({n for names in _LAZY.values() for n in names} - set(__all__))
