"""The shortcuts taken for speed (issue 17) give what the plain way gives: the libyaml loader the same documents
and, for a refused file, the same message as the pure-Python one; ``uuid4_string`` the string ``uuid.UUID``
prints; ``shallow_copy`` what ``copy.copy`` makes; ``to_units`` the ceiling of the Fraction product; PodInfo's
non-zero requests, with the NonMissingContainerRequests defaults skipped where every container requests cpu
and memory, what PodRequests with those defaults gives."""
from __future__ import annotations

import copy
import random
import uuid
from fractions import Fraction

import pytest
import yaml

from gpusim.api.core_v1 import Container, ObjectMeta, Pod, PodSpec, ResourceRequirements, Toleration
from gpusim.api.errors import InputError
from gpusim.api.schema import shallow_copy
from gpusim.cluster import scenario
from gpusim.componenthelpers.resource import pod_requests, to_units
from gpusim.controlplane.apiserver import uuid4_string

DOCS = """apiVersion: v1
kind: Pod
metadata: {name: p, labels: {a: "1", b: yes, c: 0x1f, d: 1e3, e: ~}}
spec:
  containers:
  - name: c
    image: x
    args: ["--a=1", 2, 3.5, true, null, '2024-01-01', 2024-01-01]
---
# an empty document
---
apiVersion: v1
kind: ConfigMap
metadata: {name: m}
data:
  block: |
    line one
    line two
  folded: >
    one
    two
"""


def test_libyaml_reads_the_documents_the_pure_python_loader_reads():
    assert scenario._FastStrictLoader is not None      # PyYAML wheels ship libyaml; the fast path is taken
    assert scenario._fast_load_all(DOCS) == list(yaml.load_all(DOCS, Loader=scenario._StrictLoader))


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",                       # the strict constructor's duplicate key
    "a: [1, 2\n",                         # a scanner error
    "a: 1\n---\nb: {c: 1\n---\nd: 2\n",   # an error in the second document
    "a:\n\t- 1\n",                        # a tab where indentation is expected
])
def test_a_refused_file_reports_the_pure_python_loaders_error(text):
    assert scenario._fast_load_all(text) is None
    with pytest.raises(InputError) as fast:
        scenario.read_documents("f.yaml", text)
    with pytest.raises(InputError) as plain:
        scenario._read_strict("f.yaml", text)
    assert str(fast.value) == str(plain.value)


def test_uuid4_string_is_what_uuid_prints():
    rng = random.Random(7)
    for bits in [0, (1 << 128) - 1, *(rng.getrandbits(128) for _ in range(5000))]:
        assert uuid4_string(bits) == str(uuid.UUID(int=bits, version=4))


def test_shallow_copy_is_copy_copy():
    spec = PodSpec(containers=[Container(name="c", image="x", resources=ResourceRequirements(limits={"cpu": "1"}))],
                   tolerations=[Toleration(key="k", operator="Exists")], node_selector={"zone": "a"})
    fast, plain = shallow_copy(spec), copy.copy(spec)
    assert fast == plain and fast is not spec
    assert fast.containers is spec.containers and fast.tolerations is spec.tolerations   # shallow: shared parts


def test_to_units_is_the_ceiling_of_the_fraction_product():
    rng = random.Random(3)
    for _ in range(20000):
        q = Fraction(rng.randint(-10**6, 10**12), rng.choice([1, 3, 1000, 1024, 10**9, rng.randint(1, 10**9)]))
        for name in ("cpu", "memory", "nvidia.com/gpu"):
            v = q * 1000 if name == "cpu" else q
            assert to_units(name, q) == -((-v.numerator) // v.denominator)


def test_pod_info_non_zero_requests_are_those_of_pod_requests_with_the_defaults():
    """framework/types.go calculateResource: non0CPU/non0Mem from PodRequests with NonMissingContainerRequests
    (100m, 200Mi per container without a request); the shortcut skips the second PodRequests only when it
    would change nothing."""
    from gpusim.scheduler.framework import NON_MISSING_DEFAULTS, PodInfo
    rng = random.Random(5)
    seen_shortcut = seen_full = 0
    for i in range(400):
        def container(j):
            res = {k: v for k, v in (("cpu", rng.choice(["0", "250m", "2"])),
                                     ("memory", rng.choice(["0", "1Gi", "300Mi"])),
                                     ("nvidia.com/gpu", "1")) if rng.random() < 0.7}
            return Container(name=f"c{j}", image="x", resources=ResourceRequirements(requests=dict(res),
                                                                                     limits=dict(res)))
        spec = PodSpec(containers=[container(j) for j in range(rng.randint(1, 3))],
                       init_containers=[container(9)] if rng.random() < 0.2 else [])
        pod = Pod(metadata=ObjectMeta(name=f"p{i}"), spec=spec)
        full = pod_requests(Pod(metadata=ObjectMeta(name="q"), spec=spec), dict(NON_MISSING_DEFAULTS))
        want = {r: to_units(r, full.get(r, Fraction(0))) for r in ("cpu", "memory")}
        got = PodInfo(pod).non_zero
        assert {r: got[r] for r in ("cpu", "memory")} == want, spec
        every = not spec.init_containers and all(
            {"cpu", "memory"} <= set(c.resources.requests) for c in spec.containers)
        seen_shortcut += every
        seen_full += not every
    assert seen_shortcut > 20 and seen_full > 20      # both branches ran


def test_random_suffix_draws_what_rng_choice_draws():
    from gpusim.controllers.job import ALPHANUMS, random_suffix
    fast, plain = random.Random(11), random.Random(11)
    for _ in range(5000):
        assert random_suffix(fast) == "".join(plain.choice(ALPHANUMS) for _ in range(5))
    assert fast.getstate() == plain.getstate()      # the same state after: later draws agree too


def test_a_device_plugins_ids_are_those_it_advertises():
    from gpusim.node.deviceplugin import ResourceServer
    for replicas in (1, 4):
        srv = ResourceServer.__new__(ResourceServer)
        srv.base_ids, srv.replicas = [(f"GPU-{k}", k) for k in range(8)], replicas

        class _Plugin:
            devices = [type("D", (), {"index": k, "health": "Healthy"})() for k in range(8)]
            numa_of = staticmethod(lambda g: 0)
        srv.plugin = _Plugin()
        assert srv._ids() == {d.id for d in srv.snapshot()}
