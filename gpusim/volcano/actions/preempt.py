"""preempt (mirrors volcano-sh/volcano pkg/scheduler/actions/preempt/preempt.go), between jobs of the same
queue: a starving job's pending task may evict Running, preemptable (``volcano.sh/preemptable`` absent or
true) tasks of other jobs in its queue that the Preemptable plugins allow (priority: lower job priority; gang:
a job keeps minAvailable; drf: shares; conformance: no critical pods), in BuildVictimsPriorityQueue order, until
the preemptor fits (``preemptorFitsOnNode``: its queue's Allocatable, the node's future idle resources and the
predicates); on the first node in node-order score order (util.PrioritizeNodes and SortNodes: highest score first, equal
scores in the session's node order) where it then fits the task is pipelined, and only that node's
evictions join the job's statement: a node where it still does not fit gets its evictions discarded (upstream's
per-node statement of volcano#5010, merged to master in February 2026; before it a node's evictions stayed in the
job's statement even where the preemptor then did not fit). A preemptor whose ``preemptionPolicy`` is ``Never`` does not preempt (taskEligibleToPreempt; its
nominated-node check is not modelled). The statement is committed if the job is then JobPipelined, else discarded. Preemption between tasks of one job is not simulated. A job with a
``networkTopology`` does not preempt (upstream skips it: volcano-sh/volcano issue 4374)."""
from __future__ import annotations

from ..api import PENDING, RUNNING, add, less_equal, resource
from ..framework import PriorityQueue, Statement

NAME = "preempt"


def preemptor_fits_on_node(ssn, queue, preemptor, node) -> bool:
    """preemptorFitsOnNode (preempt.go, master): the preemptor's queue admits it (Allocatable), its request fits
    the node's future idle resources, and the predicates pass."""
    return (ssn.allocatable(queue, preemptor) and less_equal(preemptor.resreq, node.future_idle())
            and not ssn.predicate_fn(preemptor, node))


def _preempt(ssn, stmt: Statement, preemptor, job) -> bool:
    """normalPreempt: per node, evictions go to a statement of their own; they are merged into ``stmt`` with the
    preemptor's pipeline only on the node where it then fits, and discarded on every other node."""
    if preemptor.pod.spec.preemption_policy == "Never":    # taskEligibleToPreempt (volcano#3642)
        ssn.trace("preempt.(*Action).preempt", f"Pod {preemptor.ref}",
                  "not eligible to preempt other tasks due to preemptionPolicy is Never")
        return False
    queue = ssn.queues[job.queue]
    feasible = [n for n in ssn.nodes.values() if not ssn.predicate_fn(preemptor, n)]   # PredicateNodes
    scores = ssn.node_order_fn(preemptor, feasible) if feasible else {}                  # PrioritizeNodes
    for node in sorted(feasible, key=lambda n: -scores[n.name]):   # util.SortNodes: score descending, ties in order
        candidates = []
        for t in sorted(node.tasks.values(), key=lambda t: (t.namespace, t.name)):
            if t.status != RUNNING or not t.preemptable or t.job == job.uid:
                continue
            vj = ssn.jobs.get(t.job)
            if vj is None or vj.queue != job.queue:
                continue
            candidates.append(t)
        victims = ssn.preemptable(preemptor, candidates) if candidates else []
        freeable = add(node.future_idle(), resource())
        for v in victims:
            add(freeable, v.resreq)
        if not victims or not less_equal(preemptor.resreq, freeable):     # util.ValidateVictims
            continue
        node_stmt = Statement(ssn)
        order = ssn.build_victims_priority_queue(victims, preemptor)
        fits = preemptor_fits_on_node(ssn, queue, preemptor, node)
        while not order.empty() and not fits:
            node_stmt.evict(order.pop(), "preempt")
            fits = preemptor_fits_on_node(ssn, queue, preemptor, node)
        if fits:
            node_stmt.pipeline(preemptor, node)
            stmt.merge(node_stmt)
            return True
        if node_stmt.ops:
            ssn.trace("preempt.(*Action).normalPreempt", f"Pod {preemptor.ref}", "Discard", node=node.name,
                      victims=[t.ref for _, t, _ in node_stmt.ops])
        node_stmt.discard()
    return False


def execute(ssn) -> None:
    by_queue: dict[str, PriorityQueue] = {}
    for uid in sorted(ssn.jobs):
        job = ssn.jobs[uid]
        if job.is_pending() or ssn.job_valid(job) is not None or ssn.queues.get(job.queue) is None:
            continue
        if not ssn.job_starving(job):
            continue
        if job.network_topology is not None:
            # upstream: "jobs containing networkTopology do not support preemption" (volcano issue 4374)
            ssn.trace("preempt.(*Action).Execute", f"PodGroup {job.uid}", "skip preemption: networkTopology")
            continue
        by_queue.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
    for qname in sorted(by_queue):
        jobs = by_queue[qname]
        while not jobs.empty():
            job = jobs.pop()
            tasks = PriorityQueue(ssn.task_order_fn)
            for t in job.of(PENDING):
                tasks.push(t)
            stmt = Statement(ssn)
            while ssn.job_starving(job) and not tasks.empty():
                _preempt(ssn, stmt, tasks.pop(), job)
            if ssn.job_pipelined(job):
                if stmt.ops:
                    ssn.trace("preempt.(*Action).Execute", f"PodGroup {job.uid}", "Commit",
                              victims=[t.ref for op, t, _ in stmt.ops if op == "evict"])
                stmt.commit()
            else:
                stmt.discard()
