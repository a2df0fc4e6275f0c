"""``gpusim`` command line: run a scenario and print it as kubectl would.

    gpusim run FILE... [-o table|wide|json|events|trace] [--seed N] [--until T]
    gpusim describe pod NAME -f FILE... [-n NAMESPACE]
    gpusim describe node NAME -f FILE...
    gpusim describe computedomain NAME -f FILE... [-n NAMESPACE]
    gpusim explain pod NAME -f FILE... [-n NAMESPACE]
    gpusim diagnose pod NAME -f FILE... [-n NAMESPACE]
    gpusim metrics -f FILE... [--at T] [--alerts]
    gpusim topo -m NODE -f FILE...
    gpusim replay alibaba [--trace NAME] [--policy NAME] [--seed N] [--tune 1.3] [-o table|json]
    gpusim sweep [--traces ...] [--policies ...] [--seeds 42-51] [--address tcp://HOST:8786] [--out FILE]

Exit 0 when the simulation ran (pending pods are a result), 2 with a one-paragraph error when
the input is invalid.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import warnings
from typing import Optional

from .api.duration import DurationError, parse_duration
from .api.errors import InputError


OUTPUTS = {"table": "the final pods, as kubectl get pods", "wide": "the same with IP, node, nominated node and readiness gates columns",
           "json": "everything, machine-readable (pods, nodes, events, jobs, allocations)",
           "events": "the events, as kubectl get events", "trace": "every RPC and extension point call, with the "
           "upstream function it mirrors", "nodes": "the nodes, as kubectl get nodes"}


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, metavar="N", help="random seed (default: the Simulation's spec.seed, else 0)")
    p.add_argument("--until", metavar="DURATION",
                   help="stop the simulated clock at this Go duration, e.g. 90m (default: the Simulation's "
                        "spec.until, else when nothing more can happen)")


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    p = argparse.ArgumentParser(prog="gpusim", description="Simulate GPU scheduling on Kubernetes: run scenarios "
                                "written as Kubernetes YAML and print what kubectl would show.",
                                epilog="Exit status: 0 when the simulation ran (pending pods are a result), 2 when "
                                "the input is invalid (one paragraph naming file, object and field).")
    p.add_argument("--version", action="version", version=f"gpusim {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="simulate a scenario and print the final pods, events or JSON",
                         description="Simulate the scenario in FILE... (YAML, many documents each) and print the "
                                     "result.", formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog="output formats:\n" + "\n".join(f"  {k:<7} {v}" for k, v in OUTPUTS.items()))
    run.add_argument("files", nargs="+", metavar="FILE", help="scenario files, read in order")
    run.add_argument("-o", "--output", default="table", choices=list(OUTPUTS), metavar="FORMAT",
                     help="one of " + ", ".join(OUTPUTS) + " (default: table)")
    run.add_argument("-n", "--namespace", help="list that namespace's pods (e.g. gpu-operator: the GPU Operator's "
                     "operand pods); default: the workload pods")
    run.add_argument("-A", "--all-namespaces", action="store_true", help="list every pod with a NAMESPACE column")
    _run_options(run)
    desc = sub.add_parser("describe", help="describe a pod or node at the end of the run, as kubectl describe",
                          description="Run the scenario, then print the object as kubectl describe does, events "
                                      "included.")
    desc.add_argument("kind", choices=["pod", "pods", "po", "node", "nodes", "no", "computedomain", "computedomains"],
                      metavar="KIND", help="pod, node or computedomain (pods, po, nodes, no, computedomains also work)")
    desc.add_argument("name", metavar="NAME", help="the object's name")
    desc.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                      help="a scenario file; repeat for several")
    desc.add_argument("-n", "--namespace", default="default", help="the pod's namespace (default: default)")
    _run_options(desc)
    ex = sub.add_parser("explain", help="why a pod was placed (or not): filter verdicts and scores per attempt",
                        description="Run the scenario, then print every scheduling attempt of the pod: which plugin "
                                    "rejected each node, and each node's scores.")
    ex.add_argument("kind", choices=["pod", "pods", "po"], metavar="KIND", help="pod")
    ex.add_argument("name", metavar="NAME", help="the pod's name")
    ex.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                    help="a scenario file; repeat for several")
    ex.add_argument("-n", "--namespace", default="default", help="the pod's namespace (default: default)")
    _run_options(ex)
    dg = sub.add_parser("diagnose", help="why a pod does not run: the chain of causes, the root cause and the fix",
                        description="Run the scenario, then walk queue admission, gang, scheduler filters, kubelet "
                                    "admission, device plugin, GPU Operator operands and hardware for the pod (or, "
                                    "when no pod has the name, the Job whose pods were never created).")
    dg.add_argument("kind", choices=["pod", "pods", "po"], metavar="KIND", help="pod")
    dg.add_argument("name", metavar="NAME", help="the pod's (or its Job's) name")
    dg.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                    help="a scenario file; repeat for several")
    dg.add_argument("-n", "--namespace", default="default", help="the pod's namespace (default: default)")
    _run_options(dg)
    me = sub.add_parser("metrics", help="the DCGM exporter's metrics at a time, in the Prometheus text format",
                        description="Run the scenario, then print what every dcgm-exporter's /metrics returns at "
                                    "--at (or the alerts pending or firing then, with --alerts).")
    me.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                    help="a scenario file; repeat for several")
    me.add_argument("--at", metavar="DURATION", help="the scrape time, a Go duration (default: the end of the run)")
    me.add_argument("--alerts", action="store_true", help="print the reference's DCGM alert rules' alerts instead")
    _run_options(me)
    topo = sub.add_parser("topo", help="a node's GPU/NIC topology matrix, as nvidia-smi topo -m prints it",
                          description="Load the scenario and print what `nvidia-smi topo -m` prints on NODE: the "
                                      "link class of every GPU/NIC pair, CPU and NUMA affinity, and the legends.")
    topo.add_argument("-m", "--matrix", action="store_true", required=True,
                      help="the topology matrix (the only nvidia-smi topo view gpusim prints)")
    topo.add_argument("node", metavar="NODE", help="the node's name")
    topo.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                      help="a scenario file; repeat for several")
    from .replay.cli import add_parsers as add_replay_parsers
    add_replay_parsers(sub)   # replay alibaba, sweep (gpusim/replay/cli.py)
    return p


def _run(files: list[str], seed: Optional[int], until: Optional[str]):
    from .cluster.simulation import Simulation
    from .cluster.scenario import load
    u = None
    if until is not None:
        try:
            u = parse_duration(until)
        except DurationError as e:
            raise InputError(f'--until: Invalid value: "{until}": {e}') from None
        if u <= 0:
            raise InputError(f'--until: Invalid value: "{until}": must be greater than 0')
    if seed is not None and seed < 0:
        raise InputError(f"--seed: Invalid value: {seed}: must be greater than or equal to 0")
    return Simulation(load(files), seed=seed, until=u).run()


def _duration_arg(flag: str, value: str, end: float) -> float:
    try:
        d = parse_duration(value)
    except DurationError as e:
        raise InputError(f'{flag}: Invalid value: "{value}": {e}') from None
    if d < 0 or d > end:
        raise InputError(f'{flag}: Invalid value: "{value}": must be between 0s and the end of the run ({end:g}s)')
    return d


def main(argv: Optional[list[str]] = None) -> int:
    from .views import kubectl
    args = _parser().parse_args(argv)
    gc_was_enabled = gc.isenabled()
    gc.disable()   # a short-lived command: cyclic GC scans would cost more than they free
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = _main(args, kubectl)
        for w in caught:   # one line each, as kubectl prints its warnings
            print(f"warning: {w.message}", file=sys.stderr)
        return code
    finally:
        if gc_was_enabled:
            gc.enable()


def entry() -> None:
    """The ``gpusim`` console script and ``python -m gpusim``: :func:`main`, then exit. ``gc.freeze()`` first:
    a run leaves millions of objects in reference cycles (simpy processes and their generators), and the
    interpreter's collection at shutdown would scan them all (about 1.2 s after a 10,000-pod run) only for the
    process to end; frozen, they are left to the operating system."""
    code = main()
    gc.freeze()
    sys.exit(code)


def _main(args, kubectl) -> int:
    try:
        if args.command in ("replay", "sweep"):
            from .replay.cli import main as replay_main
            return replay_main(args)
        if args.command == "topo":
            return _topo(args)
        if args.command == "run":
            result = _run(args.files, args.seed, args.until)
            out = args.output
            if out == "json":
                text = json.dumps(kubectl.to_json(result), indent=2, ensure_ascii=False)
            elif out == "events":
                text = kubectl.get_events(result)
            elif out == "trace":
                from .views.text import trace_table
                text = trace_table(result)
            elif out == "nodes":
                text = kubectl.get_nodes(result)
            else:
                text = kubectl.get_pods(result, wide=out == "wide", namespace=args.namespace,
                                        all_namespaces=args.all_namespaces)
        else:
            result = _run(args.filename, args.seed, args.until)
            try:
                if args.command == "explain":
                    from .views.explain import explain_pod
                    text = explain_pod(result, args.name, args.namespace)
                elif args.command == "diagnose":
                    from .views.diagnose import diagnose_pod
                    text = diagnose_pod(result, args.name, args.namespace).render()
                elif args.command == "metrics":
                    from .views import dcgm
                    at = _duration_arg("--at", args.at, result.end) if args.at else result.end
                    text = dcgm.alerts_table(result, at) if args.alerts else dcgm.exposition(result, at).rstrip("\n")
                elif args.kind in ("pod", "pods", "po"):
                    text = kubectl.describe_pod(result, args.name, args.namespace)
                elif args.kind.startswith("computedomain"):
                    from .views.computedomain import describe_computedomain
                    text = describe_computedomain(result, args.name, args.namespace)
                else:
                    text = kubectl.describe_node(result, args.name)
            except KeyError as e:
                print(f"Error from server (NotFound): {e.args[0]}", file=sys.stderr)
                return 1
    except InputError as e:
        print(" ".join(str(e).split()), file=sys.stderr)
        return 2
    return _print(text)


def _topo(args) -> int:
    """``nvidia-smi topo -m`` on a node of the scenario (loaded, not run: the board is known at load time)."""
    from .cluster.scenario import load
    from .hardware.topology import format_topo_m
    sc = load(args.filename)
    if args.node not in {n.metadata.name for n in sc.nodes}:
        print(f'Error from server (NotFound): nodes "{args.node}" not found', file=sys.stderr)
        return 1
    key = sc.boards.get(args.node)
    if key is None:
        print(f'node "{args.node}" has no NVIDIA GPUs with a server board (a GPU-less node or a vGPU VM): '
              "nvidia-smi topo -m has nothing to show", file=sys.stderr)
        return 1
    return _print(format_topo_m(sc.board_graphs[key]), end="")


def _print(text: str, end: str = "\n") -> int:
    """Print; a reader that goes away early (``gpusim run … | head -1``) ends the output quietly, as
    kubectl's output does, instead of a BrokenPipeError traceback."""
    try:
        print(text, end=end)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's documented idiom (library/signal.html, "Note on SIGPIPE"): point stdout at devnull so the
        # interpreter's final flush does not raise again.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
