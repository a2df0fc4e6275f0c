"""The YAML templates of chapter 09 (course/templates/): every built-in Kubernetes object validates against
Kubernetes' own OpenAPI schemas for 1.36 (kubernetes-validate, strict: unknown fields are errors, as with
``kubectl apply --validate=strict``), and every template runs through gpusim on its cluster with the
outcome the chapter describes."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import gpusim as gs

kv = pytest.importorskip("kubernetes_validate")

TEMPLATES = Path(__file__).resolve().parents[1] / "course" / "templates"
K8S_VERSION = "1.36.0"
# API groups that are not built into Kubernetes: CRDs (validated by gpusim's strict loader) and gpusim's own kinds
NOT_BUILT_IN = {"gpusim.io", "kubescheduler.config.k8s.io", "nvidia.com", "scheduling.x-k8s.io",
                "scheduling.volcano.sh", "batch.volcano.sh", "kueue.x-k8s.io"}
TRAINING, INFERENCE, DEVICE_PLUGIN = "cluster-training.yaml", "cluster-inference.yaml", "device-plugin-config.yaml"


def documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def group(doc: dict) -> str:
    api = doc["apiVersion"]
    return api.split("/")[0] if "/" in api else ""


def run(*names: str):
    return gs.run(*(str(TEMPLATES / n) for n in names))


def phases(r) -> dict[str, str]:
    return {p.metadata.name: p.status.phase for p in r.pods()}


@pytest.mark.parametrize("path", sorted(TEMPLATES.glob("*.yaml")), ids=lambda p: p.name)
def test_built_in_kinds_validate_against_kubernetes_schemas(path):
    built_in = [d for d in documents(path) if group(d) not in NOT_BUILT_IN]
    for d in built_in:
        kv.validate(d, K8S_VERSION, strict=True)      # raises ValidationError on a wrong or unknown field
    if path.name.startswith(("inference-", "kueue-", "scheduler-", "training-coscheduling", "device-plugin")):
        assert built_in, f"{path.name} should hold built-in objects"


def test_validator_rejects_an_unknown_field():
    pod = next(d for d in documents(TEMPLATES / "inference-mig.yaml") if d["kind"] == "Pod")
    pod["spec"]["containers"][0]["resource"] = pod["spec"]["containers"][0].pop("resources")
    with pytest.raises(kv.ValidationError, match="'resource' was unexpected"):
        kv.validate(pod, K8S_VERSION, strict=True)


def test_every_non_built_in_group_is_known_to_gpusim():
    from gpusim.api.scheme import KINDS
    for path in TEMPLATES.glob("*.yaml"):
        for d in documents(path):
            if group(d) in NOT_BUILT_IN:
                assert (d["apiVersion"], d["kind"]) in KINDS, f"{path.name}: {d['apiVersion']} {d['kind']}"


def check_binpack(r):
    nodes = {p.metadata.name: p.spec.node_name for p in r.pods()}
    assert nodes["small-train-0"] == nodes["small-train-1"] != nodes["big-train"]   # packed, a whole node left
    assert set(phases(r).values()) == {"Succeeded"}


def check_gang(r):
    from gpusim.workloads.training import training_report
    g = training_report(r)[0]
    assert g["workers"] == 4 and g["completed_at"] is not None and g["wasted_gpu_hours"] < 0.01
    assert set(phases(r).values()) == {"Succeeded"}


def check_kueue(r):
    wl = {w["name"].split("-")[1]: w for w in gs.kueue_workloads(r)}
    assert wl["pretrain"]["evictions"] == 1 and wl["finetune"]["wait"] == 0     # reclaimed within the cohort
    assert set(phases(r).values()) == {"Succeeded"}
    assert all(p.spec.tolerations and any(t.key == "nvidia.com/gpu" for t in p.spec.tolerations) for p in r.pods())


def check_volcano_queues(r):
    evicted = [e for e in r.events.log if e.reason == "Evict" and e.object.kind == "Pod"]
    assert len(evicted) == 4 and all(e.message == "Pod is evicted, because of reclaim" for e in evicted)
    assert {j["name"]: j["phase"] for j in gs.volcano_jobs(r)} == {"serve-train": "Completed", "sweep": "Completed"}


def check_sharing(resource, node, pods):
    def check(r):
        assert phases(r) == {p: "Running" for p in pods}
        assert all(r.pod(p).spec.node_name == node for p in pods)
        assert not [e for e in r.events.log if e.reason in ("FailedScheduling", "UnexpectedAdmissionError")]
        assert resource in r.api.get("Node", "", node).status.allocatable
    return check


CASES = {
    "scheduler-gpu-binpack.yaml": ((TRAINING,), check_binpack),
    "training-coscheduling.yaml": ((TRAINING,), check_gang),
    "training-volcano.yaml": ((TRAINING,), check_gang),
    "kueue-queues.yaml": ((TRAINING,), check_kueue),
    "volcano-queues.yaml": ((TRAINING,), check_volcano_queues),
    "inference-time-slicing.yaml": ((INFERENCE, DEVICE_PLUGIN),
                                    check_sharing("nvidia.com/gpu.shared", "ts-0", ["dev-endpoint-0", "dev-endpoint-1"])),
    "inference-mps.yaml": ((INFERENCE, DEVICE_PLUGIN), check_sharing("nvidia.com/gpu", "mps-0", ["embed-0", "embed-1", "embed-2"])),
    "inference-mig.yaml": ((INFERENCE, DEVICE_PLUGIN),
                           check_sharing("nvidia.com/mig-1g.10gb", "mig-0", ["tenant-a-chat", "tenant-b-chat"])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_template_runs_through_gpusim(name):
    cluster, check = CASES[name]
    check(run(*cluster, name))


def test_every_template_is_run():
    names = {p.name for p in TEMPLATES.glob("*.yaml")} - {TRAINING, INFERENCE, DEVICE_PLUGIN}
    assert names == set(CASES)


def test_device_plugin_config_gives_each_node_its_sharing_mode():
    r = run(INFERENCE, DEVICE_PLUGIN)
    alloc = {n.metadata.name: {k: v for k, v in n.status.allocatable.items() if k.startswith("nvidia.com/")}
             for n in r.nodes()}
    assert alloc == {"ts-0": {"nvidia.com/gpu.shared": "4"}, "mps-0": {"nvidia.com/gpu": "4"},
                     "mig-0": {"nvidia.com/mig-1g.10gb": "7"}}
