"""DefaultPreemption (plugins/defaultpreemption, framework/preemption): PostFilter.

Eligibility (preemptionPolicy Never), potential nodes (status exactly Unschedulable), victims on
each node (all lower-priority pods removed, then reprieved from the most important down while the
preemptor still fits), and pickOneNodeForPreemption's criteria (fewest PDB violations — none here —,
lowest highest-victim priority, smallest priority sum, fewest victims, latest start). The message on
failure is ``preemption: `` + a nested FitError, as upstream. PodDisruptionBudgets are not modelled yet.
"""
from __future__ import annotations

from typing import Optional

from ..framework import Code, Diagnosis, FitError, NodeInfo, PodInfo, Status
from .queuesort import pod_priority

NAME = "DefaultPreemption"
MSG_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MAX_INT32 = 2**31 - 1


class DefaultPreemption:
    name = NAME

    def __init__(self, handle):
        self.handle = handle

    def post_filter(self, state, pi: PodInfo, statuses: dict[str, Status]) -> tuple[Optional[str], Status]:
        pod = pi.pod
        if pod.spec.preemption_policy == "Never":
            return None, Status.new(Code.Unschedulable, "preemption: " + MSG_NOT_ELIGIBLE_NEVER)
        nodes = self.handle.node_infos()
        result: dict[str, Status] = {}
        candidates = []
        for ni in nodes:
            st = statuses.get(ni.name)
            if st is None or st.code != Code.Unschedulable:
                result[ni.name] = Status.new(Code.UnschedulableAndUnresolvable, MSG_NOT_HELPFUL)
                continue
            victims, st2 = self.select_victims_on_node(state, pi, ni)
            if st2.is_success():
                candidates.append((ni, victims))
            else:
                result[ni.name] = st2
        if not candidates:
            fe = FitError(pod, len(nodes), Diagnosis(node_to_status=result))
            return None, Status.new(Code.Unschedulable, "preemption: " + fe.error())
        node, victims = self.pick_one_node(candidates)
        self.handle.preempt(pi, node.name, victims)
        return node.name, Status()

    def select_victims_on_node(self, state, pi: PodInfo, ni: NodeInfo) -> tuple[list[PodInfo], Status]:
        prio = pod_priority(pi.pod)
        potential = [p for p in ni.pods.values() if pod_priority(p.pod) < prio]
        if not potential:
            return [], Status.new(Code.UnschedulableAndUnresolvable, MSG_NO_VICTIMS)
        for p in potential:
            ni.remove_pod(p.key)
        try:
            st = self.handle.run_filters(state, pi, ni)
            if not st.is_success():
                return [], st
            potential.sort(key=lambda p: (-pod_priority(p.pod), p.pod.status.start_time or 0))
            victims = []
            for p in potential:   # reprieve the most important first
                ni.add_pod(p)
                if not self.handle.run_filters(state, pi, ni).is_success():
                    ni.remove_pod(p.key)
                    victims.append(p)
            return victims, Status()
        finally:
            for p in potential:
                ni.add_pod(p)

    @staticmethod
    def pick_one_node(candidates):
        def key(c):
            _, victims = c
            prios = [pod_priority(v.pod) for v in victims]
            highest = max(prios)
            earliest_start_of_highest = min((v.pod.status.start_time or 0) for v in victims
                                            if pod_priority(v.pod) == highest)
            return (0, highest, sum(p + MAX_INT32 + 1 for p in prios), len(victims), -earliest_start_of_highest)
        return min(candidates, key=key)


def new(args=None, handle=None) -> DefaultPreemption:
    return DefaultPreemption(handle)
