"""nodeorder (mirrors volcano-sh/volcano pkg/scheduler/plugins/nodeorder/nodeorder.go): node scores from the
kube-scheduler's Score plugins, each times its weight (arguments, defaults): ``leastrequested.weight`` 1
(NodeResourcesFit, LeastAllocated), ``mostrequested.weight`` 0 (MostAllocated over cpu and memory),
``nodeaffinity.weight`` 2, ``podaffinity.weight`` 2 (InterPodAffinity), ``balancedresource.weight`` 1,
``tainttoleration.weight`` 3, ``podtopologyspread.weight`` 2, ``imagelocality.weight`` 1 (gpusim models no
images: not scored). A weight of 0 turns a score off.
"""
from __future__ import annotations

from ...scheduler.plugins.noderesources import most_allocated
from ..k8s import PodState, framework
from .util import arg_int

NAME = "nodeorder"
WEIGHTS = {"leastrequested.weight": 1, "mostrequested.weight": 0, "nodeaffinity.weight": 2,
           "podaffinity.weight": 2, "balancedresource.weight": 1, "tainttoleration.weight": 3,
           "imagelocality.weight": 1, "podtopologyspread.weight": 2}
PLUGIN_OF = {"leastrequested.weight": "NodeResourcesFit", "balancedresource.weight": "NodeResourcesBalancedAllocation",
             "nodeaffinity.weight": "NodeAffinity", "podaffinity.weight": "InterPodAffinity",
             "tainttoleration.weight": "TaintToleration", "podtopologyspread.weight": "PodTopologySpread"}


class NodeOrder:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        self.weights = {k: arg_int(args, k, d) for k, d in WEIGHTS.items()}
        self.fw = None
        self.handle = None

    def on_session_open(self, ssn) -> None:
        scores = {PLUGIN_OF[k]: w for k, w in self.weights.items() if k in PLUGIN_OF and w > 0}
        key = (NAME, tuple(sorted(scores.items())))
        if key not in ssn.k8s_cache:
            ssn.k8s_cache[key] = framework(ssn.cache.ctx, "volcano", [], scores)
        self.fw, self.handle = ssn.k8s_cache[key]
        self.handle.nodes = {n.name: n.ni for n in ssn.nodes.values()}
        most = self.weights["mostrequested.weight"]
        states: dict[str, PodState] = {}

        def node_order(task, nodes) -> dict[str, float]:
            ps = states.get(task.uid)
            if ps is None:
                ps = states[task.uid] = PodState(task.pod)
            out = {n.name: 0.0 for n in nodes}
            if scores:
                totals, _ = self.fw.run_score(ps.state, ps.pi, [n.ni for n in nodes])
                for k, v in totals.items():
                    out[k] += v
            if most > 0:
                for n in nodes:
                    s = sum(most_allocated(n.ni.requested.get(r) + ps.pi.requests.get(r, 0), n.ni.allocatable.get(r))
                            for r in ("cpu", "memory")) // 2
                    out[n.name] += s * most
            return out

        ssn.add_fn("node_order", NAME, node_order)

    def on_session_close(self, ssn) -> None:
        pass


def new(args: dict) -> NodeOrder:
    return NodeOrder(args)
