"""allocate (mirrors volcano-sh/volcano pkg/scheduler/actions/allocate/allocate.go).

Queues in QueueOrder (Overused queues skipped), one job at a time in JobOrder (Pending jobs skipped when
enqueue is configured, else moved to Inqueue; jobs failing JobValid skipped), its Pending tasks in TaskOrder
(best-effort tasks are left to backfill). Per task: Allocatable(queue, task); nodes that pass the resource
check (request ≤ future idle: "Insufficient <res>") and the predicates; idle nodes first, else nodes whose
resources are being released; the best by node order (ties: random); Allocate on idle, else Pipeline.
The statement is committed (pods bound) only if JobReady, kept if JobPipelined, else discarded: gang
scheduling is all-or-nothing.
"""
from __future__ import annotations

from ..api import PENDING, FitErrors, insufficient, less_equal
from ..framework import PriorityQueue, Statement

NAME = "allocate"


def predicate_nodes(ssn, task) -> tuple[list, FitErrors]:
    """allocate.predicate over all nodes: the resource check first, then the predicate plugins."""
    ok, fe = [], FitErrors()
    for node in ssn.nodes.values():
        short = insufficient(task.resreq, node.future_idle())
        # api.WrapInsufficientResourceReason names the first short resource only
        reasons = [f"Insufficient {short[0]}"] if short else ssn.predicate_fn(task, node)
        if reasons:
            fe.nodes[node.name] = reasons
        else:
            ok.append(node)
    return ok, fe


def best_node(ssn, task, nodes: list):
    """Idle nodes first, else future-idle ones; more than one: the highest node-order score (random tie)."""
    idle = [n for n in nodes if less_equal(task.resreq, n.idle)]
    future = [n for n in nodes if n not in idle and less_equal(task.resreq, n.future_idle())]
    for group in (idle, future):
        if len(group) == 1:
            return group[0]
        if len(group) > 1:
            scores = ssn.node_order_fn(task, group)
            top = max(scores.values())
            ties = [n for n in group if scores[n.name] == top]
            return ties[0] if len(ties) == 1 else ssn.rng.choice(ties)
    return None


def execute(ssn) -> None:
    enqueue_on = "enqueue" in ssn.conf.actions
    queues = PriorityQueue(ssn.queue_order_fn)
    jobs_of: dict[str, PriorityQueue] = {}
    for uid in sorted(ssn.jobs):
        job = ssn.jobs[uid]
        if job.is_pending():
            if enqueue_on:
                continue
            job.phase = "Inqueue"
        if ssn.job_valid(job) is not None:
            continue
        q = ssn.queues.get(job.queue)
        if q is None:
            continue
        if q.name not in jobs_of:
            jobs_of[q.name] = PriorityQueue(ssn.job_order_fn)
            queues.push(q)
        jobs_of[q.name].push(job)
    pending: dict[str, PriorityQueue] = {}
    while not queues.empty():
        q = queues.pop()
        if ssn.overused(q):
            ssn.trace("allocate.(*Action).Execute", f"Queue {q.name}", "Overused")
            continue
        jobs = jobs_of.get(q.name)
        if jobs is None or jobs.empty():
            continue
        job = jobs.pop()
        if job.uid not in pending:
            tasks = PriorityQueue(ssn.task_order_fn)
            for t in job.of(PENDING):
                if not t.best_effort:
                    tasks.push(t)
            pending[job.uid] = tasks
        tasks = pending[job.uid]
        stmt = Statement(ssn)
        while not tasks.empty():
            task = tasks.pop()
            if not ssn.allocatable(q, task):
                ssn.trace("allocate.(*Action).Execute", f"Pod {task.ref}",
                          f"Queue <{q.name}> is overused when considering task <{task.name}>, ignore it.")
                continue
            nodes, fe = predicate_nodes(ssn, task)
            if not nodes:
                job.nodes_fit_errors[task.uid] = fe
                break
            node = best_node(ssn, task, nodes)
            if node is None:
                job.nodes_fit_errors[task.uid] = fe
                break
            if less_equal(task.resreq, node.idle):
                stmt.allocate(task, node)
            else:
                stmt.pipeline(task, node)
            if ssn.job_ready(job) and not tasks.empty():
                jobs.push(job)
                break
        if ssn.job_ready(job):
            stmt.commit()
            ssn.trace("allocate.(*Action).Execute", f"PodGroup {job.uid}", "Commit")
        elif not ssn.job_pipelined(job):
            if stmt.ops:
                ssn.trace("allocate.(*Action).Execute", f"PodGroup {job.uid}", "Discard",
                          tasks=len(stmt.ops))
            stmt.discard()
        queues.push(q)
