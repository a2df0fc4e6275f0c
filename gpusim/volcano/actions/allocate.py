"""allocate (mirrors volcano-sh/volcano pkg/scheduler/actions/allocate/allocate.go).

Queues in QueueOrder (Overused queues skipped), one job at a time in JobOrder (Pending jobs skipped when
enqueue is configured, else moved to Inqueue; jobs failing JobValid skipped), its Pending tasks in TaskOrder
(best-effort tasks are left to backfill). Per task: Allocatable(queue, task); nodes that pass the resource
check (request ≤ future idle: "Insufficient <res>") and the predicates; idle nodes first, else nodes whose
resources are being released; the best by node order (ties: random); Allocate on idle, else Pipeline.
A task whose role (``volcano.sh/task-spec``) already fit no node this session is skipped ("Task <name> with role
spec <role> has already predicated failed, skip"); a task that fits no node ends the job's turn unless
``JobInfo.NeedContinueAllocating`` says the job can still become ready without it, then the next task is tried
(volcano#3430, in v1.10 via #3629; the role cache is off for tasks without a role since #3649; a PrePredicate
failure takes the same path since #5528, v1.15).
The statement is committed (pods bound) only if JobReady, kept if JobPipelined, else discarded: gang
scheduling is all-or-nothing.

A job whose ``networkTopology`` is hard with a tier boundary takes upstream's allocateForJob instead: the
session's HyperNode gradient (network-topology-aware) lists the HyperNodes to try, lowest tier first; for each
HyperNode of a tier the job is dry-run on that HyperNode's nodes only (its pending tasks until JobReady; fit
errors read ``In hyperNode <name>: …``) and rolled back; among the HyperNodes where the job became ready or
pipelined the best HyperNode-order score wins (ties: random) and its allocation is replayed and, if the job is
ready, committed; the job's allocated HyperNode becomes the lowest common ancestor of the old one and the
chosen one, and the job is pushed back while tasks remain (each later round searches under that HyperNode). A
tier with no success moves the search one tier up. The job's single task group is its only sub-job (upstream's
subGroupPolicy / partitionPolicy sub-jobs are not modelled). For other jobs with a ``networkTopology`` each
task is scored against the HyperNode the job's tasks hold so far (``JobAllocatedHyperNode``).
"""
from __future__ import annotations

from typing import Optional

from ..api import PENDING, FitErrors, insufficient, less_equal
from ..framework import PriorityQueue, Statement
from ..hypernodes import CLUSTER_TOP

NAME = "allocate"


def predicate_nodes(ssn, task, nodes=None) -> tuple[list, FitErrors]:
    """allocate.predicate over all nodes (or ``nodes``): the resource check first, then the predicate plugins."""
    ok, fe = [], FitErrors()
    for node in (ssn.nodes.values() if nodes is None else nodes):
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


def skip_failed_role(job, task) -> bool:
    """allocateResourcesForTasks' role cache (master): a task whose role already fit no node this session is
    not predicated again; its fit error says so."""
    if not job.task_has_fit_errors(task):
        return False
    job.nodes_fit_errors[task.uid] = FitErrors(
        err=f"Task {task.name} with role spec {task.task_role} has already predicated failed, skip")
    return True


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
        topology = job.network_topology
        if topology is not None and topology.is_hard():
            if tasks.empty():           # organizeJobWorksheet: nothing pending, the job is skipped
                queues.push(q)
                continue
            left, committed = allocate_for_job(ssn, q, job, tasks)
            if left is not None:
                pending[job.uid] = left
                if committed and not left.empty():
                    jobs.push(job)
            queues.push(q)
            continue
        stmt = Statement(ssn)
        allocated = job.allocated_hyper_node
        while not tasks.empty():
            task = tasks.pop()
            if not ssn.allocatable(q, task):
                ssn.trace("allocate.(*Action).Execute", f"Pod {task.ref}",
                          f"Queue <{q.name}> is overused when considering task <{task.name}>, ignore it.")
                continue
            if skip_failed_role(job, task):
                continue
            nodes, fe = predicate_nodes(ssn, task)
            if not nodes:
                job.nodes_fit_errors[task.uid] = fe
                if job.need_continue_allocating():
                    continue
                break
            if topology is not None:
                task.job_allocated_hyper_node = allocated
            node = best_node(ssn, task, nodes)
            if node is None:
                continue
            if less_equal(task.resreq, node.idle):
                stmt.allocate(task, node)
            else:
                stmt.pipeline(task, node)
            if topology is not None:
                allocated = ssn.hyper_nodes.lca(allocated, ssn.hyper_nodes.hyper_node_for_node(node.name))
            if ssn.job_ready(job) and not tasks.empty():
                jobs.push(job)
                break
        if ssn.job_ready(job):
            stmt.commit()
            if topology is not None:
                job.allocated_hyper_node = allocated
            ssn.trace("allocate.(*Action).Execute", f"PodGroup {job.uid}", "Commit")
        elif not ssn.job_pipelined(job):
            if stmt.ops:
                ssn.trace("allocate.(*Action).Execute", f"PodGroup {job.uid}", "Discard",
                          tasks=len(stmt.ops))
            stmt.discard()
        queues.push(q)


def _clone(tasks: PriorityQueue) -> PriorityQueue:
    c = PriorityQueue(tasks.less)
    c.items = list(tasks.items)
    return c


def allocate_for_tasks(ssn, queue, job, tasks: PriorityQueue, nodes: list, hyper_node: str):
    """allocateResourcesForTasks on one HyperNode's nodes: tasks in order until the job is ready; the statement
    if the job is then ready or pipelined, else None (discarded)."""
    stmt = Statement(ssn)
    allocated = job.allocated_hyper_node
    hn = ssn.hyper_nodes
    while not tasks.empty():
        task = tasks.pop()
        if not ssn.allocatable(queue, task):
            ssn.trace("allocate.(*Action).Execute", f"Pod {task.ref}",
                      f"Queue <{queue.name}> is overused when considering task <{task.name}>, ignore it.")
            continue
        if skip_failed_role(job, task):
            continue
        ok, fe = predicate_nodes(ssn, task, nodes)
        if not ok:
            if hyper_node != CLUSTER_TOP:
                fe.hyper_node = hyper_node
            job.nodes_fit_errors[task.uid] = fe
            if job.need_continue_allocating():
                continue
            break
        task.job_allocated_hyper_node = allocated
        node = best_node(ssn, task, ok)
        if node is None:
            continue
        if less_equal(task.resreq, node.idle):
            stmt.allocate(task, node)
        else:
            stmt.pipeline(task, node)
        allocated = hn.lca(allocated, hn.hyper_node_for_node(node.name))
        if ssn.job_ready(job):
            break
    if ssn.job_ready(job) or ssn.job_pipelined(job):
        return stmt
    stmt.discard()
    return None


def allocate_for_job(ssn, queue, job, tasks: PriorityQueue) -> tuple[Optional[PriorityQueue], bool]:
    """allocateForJob for a hard-topology job: (the tasks left after the chosen HyperNode, whether the job was
    ready and committed); (None, False) when no HyperNode of any gradient could take the job."""
    hn = ssn.hyper_nodes
    gradients = ssn.hyper_node_gradient(job, CLUSTER_TOP)
    decision = {"gradients": [list(g) for g in gradients] if gradients is not None else None, "hyperNode": "",
                "scores": {}}
    ssn.record.setdefault("hyperNodeDecisions", {}).setdefault(job.uid, []).append(decision)
    if gradients is None:
        ssn.trace("allocate.(*Action).allocateForJob", f"PodGroup {job.uid}", "no HyperNode gradient")
        return None, False
    for i, candidates in enumerate(gradients):
        solutions: dict[str, tuple[list, PriorityQueue]] = {}
        for name in candidates:
            job.nodes_fit_errors, job.job_fit_errors = {}, ""
            left = _clone(tasks)
            nodes = [ssn.nodes[n] for n in sorted(hn.real_nodes.get(name, ())) if n in ssn.nodes]
            stmt = allocate_for_tasks(ssn, queue, job, left, nodes, name) if nodes else None
            if stmt is None or not stmt.ops:
                continue
            if ssn.job_ready(job) or ssn.job_pipelined(job):
                solutions[name] = ([(op, t, t.node_name) for op, t, _ in stmt.ops], left)
            stmt.discard()
        if not solutions:
            continue
        scores: dict[str, float] = {}
        for name in sorted(solutions):
            scores.update(ssn.hyper_node_order(job, [name]))
        top = max(scores.values())
        tied = sorted(n for n, v in scores.items() if v == top)
        best = tied[0] if len(tied) == 1 else ssn.rng.choice(tied)
        ops, left = solutions[best]
        final = Statement(ssn)
        for op, t, node in ops:
            (final.allocate if op == "allocate" else final.pipeline)(t, ssn.nodes[node])
        decision.update(hyperNode=best, scores=dict(sorted(scores.items())))
        ssn.trace("allocate.(*Action).allocateForJob", f"PodGroup {job.uid}", f"HyperNode {best}",
                  gradient=i, tier=hn.info[best].tier, scores={n: round(v, 2) for n, v in sorted(scores.items())})
        if ssn.job_ready(job):
            final.commit()
            job.allocated_hyper_node = hn.lca(job.allocated_hyper_node, best)
            ssn.trace("allocate.(*Action).Execute", f"PodGroup {job.uid}", "Commit")
            return left, True
        return left, False      # pipelined: kept in the session, not committed
    ssn.trace("allocate.(*Action).allocateForJob", f"PodGroup {job.uid}", "Cannot find any solution for job",
              gradients=[list(g) for g in gradients])
    return None, False
