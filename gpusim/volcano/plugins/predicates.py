"""predicates (mirrors volcano-sh/volcano pkg/scheduler/plugins/predicates/predicates.go): whether a task may
go to a node, by the kube-scheduler's own Filter plugins (NodeUnschedulable, NodeName, TaintToleration,
NodeAffinity, NodePorts, PodTopologySpread, InterPodAffinity) run through a framework handle over the
session's nodes. Resources are checked by the actions themselves against the node's idle / future-idle
resources (allocate.predicate), as upstream. The GPU-sharing predicates (deviceshare) are not simulated.
"""
from __future__ import annotations

from ..k8s import PodState, framework, pre_filter

NAME = "predicates"
FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "PodTopologySpread",
           "InterPodAffinity"]
# OnSessionOpen's PrePredicateFn runs the PreFilter of these only: NodeAffinity's Filter is called without its
# PreFilter (so a matchFields node name narrows nothing and every other node fails the Filter).
PRE_FILTERS = ["NodePorts", "PodTopologySpread", "InterPodAffinity"]


class Predicates:
    name = NAME

    def __init__(self, args: dict):
        self.args = args
        self.fw = None
        self.handle = None

    def on_session_open(self, ssn) -> None:
        if NAME not in ssn.k8s_cache:
            ssn.k8s_cache[NAME] = framework(ssn.cache.ctx, "volcano", FILTERS, {}, pre_filters=PRE_FILTERS)
        self.fw, self.handle = ssn.k8s_cache[NAME]
        self.handle.nodes = {n.name: n.ni for n in ssn.nodes.values()}
        states: dict[str, PodState] = {}
        all_nodes = [n.ni for n in ssn.nodes.values()]

        def predicate(task, node) -> list[str]:
            ps = states.get(task.uid)
            if ps is None:
                ps = states[task.uid] = PodState(task.pod)
            allowed, st = pre_filter(self.fw, ps, all_nodes)
            if not st.is_success():
                return list(st.reasons)
            if allowed is not None and node.name not in allowed:
                return ["node(s) didn't satisfy plugin(s) [PreFilterResult]"]
            st = self.fw.run_filters(ps.state, ps.pi, node.ni)
            return [] if st.is_success() else list(st.reasons)

        ssn.add_fn("predicate", NAME, predicate)
        ssn.k8s_states = states

    def on_session_close(self, ssn) -> None:
        pass


def new(args: dict) -> Predicates:
    return Predicates(args)
