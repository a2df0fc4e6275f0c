"""MIG geometry (gpusim.hardware.mig) and mig-parted configs (gpusim.hardware.migparted), checked against
/work/shared/reference/node-side.md §5 (profiles, placements, strategies, mig-parted format), §6 (GFD labels)."""
from __future__ import annotations

import pytest

from gpusim.hardware import CATALOG
from gpusim.hardware.mig import (GEOMETRIES, Layout, MigError, MigGeometry, MigPlacementError, MigProfile,
                                 MigStrategyError, gfd_labels, place, place_on, profile, profiles,
                                 resource_names, valid, violations)
from gpusim.hardware.migparted import (DEFAULT_CONFIG, MigApplyError, MigConfigError, apply, default_configs,
                                       is_applied, operator_default_config, parse, selected_gpus)

A40, A80, H100, H200, A30 = "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-141GB", "A30-24GB"

# --- profile tables (§5.1) ------------------------------------------------------------------------------------

# model, profile, ID, compute slices, memory slices, GiB, SMs, max count, placements
PROFILE_TABLE = [
    (A40, "1g.5gb", 19, 1, 1, 4.75, 14, 7, "{0,1,2,3,4,5,6}:1"),
    (A40, "1g.5gb+me", 20, 1, 1, 4.75, 14, 1, "{0,1,2,3,4,5,6}:1"),
    (A40, "1g.10gb", 15, 1, 2, 9.75, 14, 4, "{0,2,4,6}:2"),
    (A40, "2g.10gb", 14, 2, 2, 9.75, 28, 3, "{0,2,4}:2"),
    (A40, "3g.20gb", 9, 3, 4, 19.62, 42, 2, "{0,4}:4"),
    (A40, "4g.20gb", 5, 4, 4, 19.62, 56, 1, "{0}:4"),
    (A40, "7g.40gb", 0, 7, 8, 39.50, 98, 1, "{0}:8"),
    (A80, "1g.10gb", 19, 1, 1, 9.50, 14, 7, "{0,1,2,3,4,5,6}:1"),
    (A80, "1g.10gb+me", 20, 1, 1, 9.50, 14, 1, "{0,1,2,3,4,5,6}:1"),
    (A80, "1g.20gb", 15, 1, 2, 19.50, 14, 4, "{0,2,4,6}:2"),
    (A80, "2g.20gb", 14, 2, 2, 19.50, 28, 3, "{0,2,4}:2"),
    (A80, "3g.40gb", 9, 3, 4, 39.25, 42, 2, "{0,4}:4"),
    (A80, "4g.40gb", 5, 4, 4, 39.25, 56, 1, "{0}:4"),
    (A80, "7g.80gb", 0, 7, 8, 79.00, 98, 1, "{0}:8"),
    (H100, "1g.10gb", 19, 1, 1, 9.75, 16, 7, "{0,1,2,3,4,5,6}:1"),
    (H100, "1g.10gb+me", 20, 1, 1, 9.75, 16, 1, "{0,1,2,3,4,5,6}:1"),
    (H100, "1g.20gb", 15, 1, 2, 19.62, 26, 4, "{0,2,4,6}:2"),
    (H100, "2g.20gb", 14, 2, 2, 19.62, 32, 3, "{0,2,4}:2"),
    (H100, "3g.40gb", 9, 3, 4, 39.50, 60, 2, "{0,4}:4"),
    (H100, "4g.40gb", 5, 4, 4, 39.50, 64, 1, "{0}:4"),
    (H100, "7g.80gb", 0, 7, 8, 79.25, 132, 1, "{0}:8"),
    (H200, "1g.18gb", 19, 1, 1, 16.00, 16, 7, "{0,1,2,3,4,5,6}:1"),
    (H200, "1g.18gb+me", 20, 1, 1, 16.00, 16, 1, "{0,1,2,3,4,5,6}:1"),
    (H200, "1g.35gb", 15, 1, 2, 32.50, 26, 4, "{0,2,4,6}:2"),
    (H200, "2g.35gb", 14, 2, 2, 32.50, 32, 3, "{0,2,4}:2"),
    (H200, "3g.71gb", 9, 3, 4, 70.00, 60, 2, "{0,4}:4"),
    (H200, "4g.71gb", 5, 4, 4, 70.00, 64, 1, "{0}:4"),
    (H200, "7g.141gb", 0, 7, 8, 140.00, 132, 1, "{0}:8"),
    (A30, "1g.6gb", 14, 1, 1, 5.81, 14, 4, "{0,1,2,3}:1"),
    (A30, "1g.6gb+me", 21, 1, 1, 5.81, 14, 1, "{0,1,2,3}:1"),
    (A30, "2g.12gb", 5, 2, 2, 11.7, 28, 2, "{0,2}:2"),
    (A30, "2g.12gb+me", 6, 2, 2, 11.7, 28, 1, "{0,2}:2"),
    (A30, "4g.24gb", 0, 4, 4, 23.50, 56, 1, "{0}:4"),
]


@pytest.mark.parametrize("model,name,pid,compute,mem,gib,sms,maxc,spec", PROFILE_TABLE)
def test_profile_table(model, name, pid, compute, mem, gib, sms, maxc, spec):
    p = profile(model, name)
    assert (p.id, p.compute_slices, p.memory_slices, p.size, p.memory_gib, p.sms, p.max_count) == \
           (pid, compute, mem, mem, gib, sms, maxc)
    assert p.placement_spec == spec
    assert p.media_extensions == ("+me" in name)


@pytest.mark.parametrize("model", [A40, A80, H100, H200, A30])
def test_every_profile_is_in_the_table_and_geometry(model):
    names = [p.name for p in profiles(model)]
    assert sorted(names) == sorted(r[1] for r in PROFILE_TABLE if r[0] == model)
    geo = GEOMETRIES[model]
    assert (geo.compute_slices, geo.memory_slices) == ((4, 4) if model == A30 else (7, 8))
    for p in profiles(model):
        assert all(s + p.size <= geo.memory_slices for s in p.placements)


def test_mig_capable_catalog_models_all_have_tables():
    assert {m.name for m in CATALOG.values() if m.mig_capable} == set(GEOMETRIES)


@pytest.mark.parametrize("model,name,fields", [
    (H200, "1g.35gb", {"id", "memory_gib", "sms", "placements"}),
    (H200, "3g.71gb", {"id", "memory_gib", "sms", "placements"}),
    (H200, "4g.71gb", {"id", "memory_gib", "sms", "placements"}),
    (H200, "2g.35gb", {"placements"}),
    (H200, "7g.141gb", {"placements"}),
    (A30, "2g.12gb+me", {"id", "memory_gib", "placements"}),
    (A30, "2g.12gb", {"memory_gib"}),
    (A40, "3g.20gb", set()),
    (H100, "1g.10gb", set()),
])
def test_unverified_markers(model, name, fields):
    assert set(profile(model, name).unverified) == fields


def test_profile_names_and_resource_names():
    p = profile(A40, "1g.5gb+me")
    assert (p.device_name, p.resource_name) == ("1g.5gb.me", "nvidia.com/mig-1g.5gb.me")
    assert profile(A40, "1g.5gb").memory_mb == 4864          # GFD nvidia.com/gpu.memory for 1g.5gb
    assert profile(A80, "1g.10gb").memory_mb == 9728


def test_unknown_profile_and_non_mig_model():
    with pytest.raises(MigPlacementError, match=r'"1g.5gb" does not exist on A100-SXM4-80GB; valid profiles: 1g.10gb'):
        profile(A80, "1g.5gb")
    with pytest.raises(MigPlacementError, match=r'did you mean "1g.5gb\+me"'):
        profile(A40, "1g.5gb.me")
    with pytest.raises(MigError, match='"T4" does not support MIG'):
        profiles("T4")
    with pytest.raises(KeyError, match="unknown GPU model"):
        profiles("A100")


def test_same_name_different_geometry_across_models():
    # 1g.10gb is a 2-memory-slice profile (ID 15, max 4) on 40GB parts and a 1-slice one (ID 19, max 7) on 80GB.
    assert (profile(A40, "1g.10gb").id, profile(A40, "1g.10gb").max_count) == (15, 4)
    assert (profile(A80, "1g.10gb").id, profile(A80, "1g.10gb").max_count) == (19, 7)


# --- placement engine -----------------------------------------------------------------------------------------

VALID_REQUESTS = [
    (A40, ["4g.20gb", "3g.20gb"], "4g.20gb@0:4 3g.20gb@4:4"),
    (A40, ["1g.5gb"] * 7, " ".join(f"1g.5gb@{i}:1" for i in range(7))),
    (A40, ["3g.20gb", "3g.20gb"], "3g.20gb@0:4 3g.20gb@4:4"),
    (A40, ["2g.10gb"] * 3 + ["1g.5gb"], "2g.10gb@0:2 2g.10gb@2:2 2g.10gb@4:2 1g.5gb@6:1"),
    (A40, ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"], "2g.10gb@0:2 1g.5gb@2:1 1g.5gb@3:1 3g.20gb@4:4"),
    (A40, ["7g.40gb"], "7g.40gb@0:8"),
    (A40, ["1g.10gb"] * 4, "1g.10gb@0:2 1g.10gb@2:2 1g.10gb@4:2 1g.10gb@6:2"),
    (A40, ["1g.10gb"] + ["1g.5gb"] * 6, " ".join(f"1g.5gb@{i}:1" for i in range(6)) + " 1g.10gb@6:2"),
    (A40, ["1g.5gb+me", "3g.20gb", "2g.10gb"], "3g.20gb@0:4 2g.10gb@4:2 1g.5gb+me@6:1"),
    (A40, [], ""),
    (A80, ["4g.40gb", "3g.40gb"], "4g.40gb@0:4 3g.40gb@4:4"),
    (A80, ["1g.10gb"] * 7, " ".join(f"1g.10gb@{i}:1" for i in range(7))),
    (H100, ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], "2g.20gb@0:2 1g.10gb@2:1 1g.10gb@3:1 3g.40gb@4:4"),
    (H200, ["7g.141gb"], "7g.141gb@0:8"),
    (H200, ["1g.35gb"] * 4, "1g.35gb@0:2 1g.35gb@2:2 1g.35gb@4:2 1g.35gb@6:2"),
    (A30, ["2g.12gb", "1g.6gb", "1g.6gb"], "2g.12gb@0:2 1g.6gb@2:1 1g.6gb@3:1"),
    (A30, ["1g.6gb"] * 4, "1g.6gb@0:1 1g.6gb@1:1 1g.6gb@2:1 1g.6gb@3:1"),
    (A30, ["2g.12gb", "2g.12gb"], "2g.12gb@0:2 2g.12gb@2:2"),
    (A30, ["2g.12gb+me", "1g.6gb", "1g.6gb"], "2g.12gb+me@0:2 1g.6gb@2:1 1g.6gb@3:1"),
]


@pytest.mark.parametrize("model,requested,expected", VALID_REQUESTS)
def test_place_valid(model, requested, expected):
    layout = place(model, requested)
    assert " ".join(map(str, layout.instances)) == expected
    assert valid(model, layout) and layout.mig_enabled
    assert sorted(layout.profile_names) == sorted(requested)
    assert place(model, list(reversed(requested))) == layout          # deterministic, order-independent


INVALID_REQUESTS = [
    (A40, ["4g.20gb", "4g.20gb"], "4g.20gb", r"2 × 4g.20gb requested but A100-SXM4-40GB allows at most 1"),
    (A40, ["1g.5gb"] * 8, "1g.5gb", r"at most 7 × 1g.5gb"),
    (A40, ["3g.20gb"] * 3, "3g.20gb", r"at most 2 × 3g.20gb"),
    (A40, ["1g.10gb"] * 5, "1g.10gb", r"at most 4 × 1g.10gb"),
    (A40, ["7g.40gb", "1g.5gb"], None, r"need 8 compute slices but A100-SXM4-40GB has 7"),
    (A40, ["4g.20gb", "2g.10gb", "2g.10gb"], None, r"need 8 compute slices"),
    (A40, ["3g.20gb", "3g.20gb", "1g.5gb"], None, r"need 9 memory slices but A100-SXM4-40GB has 8"),
    (A40, ["1g.5gb+me", "1g.5gb+me"], "1g.5gb+me", r"at most 1 × 1g.5gb\+me"),
    (A40, ["1g.5gb", "2g.20gb"], "2g.20gb", r'"2g.20gb" does not exist on A100-SXM4-40GB'),
    (A80, ["1g.5gb"], "1g.5gb", r'"1g.5gb" does not exist on A100-SXM4-80GB'),
    (A30, ["1g.6gb+me", "2g.12gb+me"], "2g.12gb+me", r"only one media-extension \(\+me\) instance"),
    (A30, ["4g.24gb", "1g.6gb"], None, r"need 5 compute slices but A30-24GB has 4"),
    (A30, ["2g.12gb"] * 3, "2g.12gb", r"at most 2 × 2g.12gb"),
]


@pytest.mark.parametrize("model,requested,culprit,message", INVALID_REQUESTS)
def test_place_invalid(model, requested, culprit, message):
    with pytest.raises(MigPlacementError, match=message) as e:
        place(model, requested)
    assert e.value.profile == culprit


def test_place_accepts_mig_devices_mapping():
    assert place(A40, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1, "7g.40gb": 0}) == \
           place(A40, ["3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb"])
    with pytest.raises(MigPlacementError, match="non-negative integer"):
        place(A40, {"1g.5gb": -1})


def test_place_reports_the_profile_that_found_no_room():
    # A made-up GPU where the budget checks pass but no arrangement exists: 1-slice profiles may not use slices 2-3.
    toy = MigGeometry("toy", 4, 4, (MigProfile("2g.x", 1, 2, 2, 1.0, 1, 2, (0, 2)),
                                    MigProfile("1g.x", 2, 1, 1, 0.5, 1, 4, (0, 1))), ())
    assert str(place_on(toy, ["1g.x", "2g.x", "1g.x"])) == "toy: 1g.x@0:1 1g.x@1:1 2g.x@2:2"
    with pytest.raises(MigPlacementError, match=r"after placing 1g.x@0:1, 1g.x@1:1, 1g.x cannot be placed: "
                                                r"every start in \{0,1\}:1 overlaps") as e:
        place_on(toy, ["1g.x"] * 3)
    assert e.value.profile == "1g.x"


@pytest.mark.parametrize("model", [A40, A30])
def test_every_budget_valid_request_is_placed_validly(model):
    """Exhaustive over all multisets within the max counts: place() either succeeds with a valid layout holding
    exactly the request, or rejects it for a reason no placement could overcome."""
    ps = profiles(model)

    def multisets(i):
        if i == len(ps):
            yield []
            return
        for rest in multisets(i + 1):
            for c in range(ps[i].max_count + 1):
                yield [ps[i].name] * c + rest

    placed = 0
    for req in multisets(0):
        try:
            layout = place(model, req)
        except MigPlacementError:
            continue
        placed += 1
        assert valid(model, layout) and sorted(layout.profile_names) == sorted(req)
    assert placed > (60 if model == A40 else 10)


LAYOUT_CHECKS = [
    (A40, [("4g.20gb", 0), ("3g.20gb", 4)], []),
    (A40, [("3g.20gb", 0), ("3g.20gb", 4)], []),
    (A40, [("3g.20gb", 2)], ["3g.20gb cannot start at memory slice 2; valid placements {0,4}:4"]),
    (A40, [("2g.10gb", 6)], ["2g.10gb cannot start at memory slice 6; valid placements {0,2,4}:2"]),
    (A40, [("1g.5gb", 7)], ["1g.5gb cannot start at memory slice 7; valid placements {0,1,2,3,4,5,6}:1"]),
    (A40, [("4g.20gb", 0), ("4g.20gb", 0)], ["4g.20gb@0:4 and 4g.20gb@0:4 overlap in memory slices",
                                             "2 × 4g.20gb requested but A100-SXM4-40GB allows at most 1 × 4g.20gb "
                                             "(placements {0}:4)"]),
    (A40, [("3g.20gb", 0), ("2g.10gb", 2)], ["3g.20gb@0:4 and 2g.10gb@2:2 overlap in memory slices"]),
    (A40, [("1g.5gb+me", 0), ("1g.5gb+me", 1)], ["2 × 1g.5gb+me requested but A100-SXM4-40GB allows at most "
                                                 "1 × 1g.5gb+me (placements {0,1,2,3,4,5,6}:1)"]),
    (A30, [("1g.6gb+me", 0), ("2g.12gb+me", 2)], ["only one media-extension (+me) instance can exist per GPU; "
                                                  "requested 2 (1g.6gb+me, 2g.12gb+me)"]),
]


@pytest.mark.parametrize("model,pairs,problems", LAYOUT_CHECKS)
def test_valid_checker(model, pairs, problems):
    assert violations(model, pairs) == problems
    assert valid(model, pairs) == (not problems)


def test_valid_checker_on_layout_objects():
    assert valid(A40, Layout.of(A40, [("3g.20gb", 4), ("2g.10gb", 0)]))
    assert valid(A40, Layout.disabled(A40))
    assert not valid(A80, Layout.disabled(A40))
    assert violations("T4", [("1g.5gb", 0)])[0].startswith('GPU model "T4" does not support MIG')
    assert valid("T4", Layout.disabled("T4"))


def test_layout_rendering():
    layout = place(A40, ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"])
    assert layout.diagram() == "[0-1 2g.10gb][2 1g.5gb][3 1g.5gb][4-7 3g.20gb]"
    assert layout.counts() == {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    assert (layout.compute_slices_used, layout.memory_slices_used) == (7, 8)
    assert place(A40, ["1g.5gb"] * 7).diagram().endswith("[6 1g.5gb][7 -]")
    assert str(Layout.disabled(A40)) == "A100-SXM4-40GB: MIG disabled"
    assert Layout.disabled(A40).diagram() == "[MIG disabled]"


# --- strategies (§5.3) ----------------------------------------------------------------------------------------

def gpus(model, requested, n=1):
    return [place(model, requested) for _ in range(n)]


RESOURCES = [
    ("none", [Layout.disabled(A40)] * 8, {"nvidia.com/gpu": 8}),
    ("none", gpus(A40, ["1g.5gb"] * 7, 8), {"nvidia.com/gpu": 8}),      # MIG devices ignored
    ("single", [Layout.disabled(A40)] * 2, {"nvidia.com/gpu": 2}),
    ("single", gpus(A40, ["1g.5gb"] * 7, 8), {"nvidia.com/gpu": 56}),
    ("single", gpus(A40, ["3g.20gb"] * 2, 2), {"nvidia.com/gpu": 4}),
    ("mixed", gpus(A80, ["1g.10gb"] * 7), {"nvidia.com/mig-1g.10gb": 7}),
    ("mixed", gpus(A40, ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"], 2) + [Layout.disabled(A40)],
     {"nvidia.com/gpu": 1, "nvidia.com/mig-1g.5gb": 4, "nvidia.com/mig-2g.10gb": 2, "nvidia.com/mig-3g.20gb": 2}),
    ("mixed", gpus(A40, ["1g.5gb+me", "3g.20gb"]), {"nvidia.com/mig-1g.5gb.me": 1, "nvidia.com/mig-3g.20gb": 1}),
    ("mixed", [Layout(A40)] + [Layout.disabled(A40)], {"nvidia.com/gpu": 1}),   # empty MIG GPU is allowed
    ("mixed", gpus(A30, ["2g.12gb", "1g.6gb", "1g.6gb"]), {"nvidia.com/mig-1g.6gb": 2, "nvidia.com/mig-2g.12gb": 1}),
]


@pytest.mark.parametrize("strategy,layouts,expected", RESOURCES)
def test_resource_names(strategy, layouts, expected):
    model = layouts[0].model
    assert resource_names(strategy, model, layouts) == expected


def test_resource_names_single_gpu_layout():
    assert resource_names("mixed", A40, place(A40, ["4g.20gb", "3g.20gb"])) == \
           {"nvidia.com/mig-3g.20gb": 1, "nvidia.com/mig-4g.20gb": 1}


SINGLE_ERRORS = [
    (gpus(A40, ["4g.20gb", "3g.20gb"]), "invalid MIG configuration: more than one MIG device type present on node"),
    (gpus(A40, ["1g.5gb"] * 7) + gpus(A40, ["3g.20gb"]),
     "invalid MIG configuration: more than one MIG device type present on node"),
    (gpus(A40, ["1g.5gb"] * 7) + [Layout.disabled(A40)],
     "invalid MIG configuration: all devices on the node must be configured with the same migEnabled value"),
    (gpus(A40, ["1g.5gb"] * 7) + [Layout(A40)], "invalid MIG configuration: device 1 has no MIG devices configured"),
]


@pytest.mark.parametrize("layouts,message", SINGLE_ERRORS)
def test_single_strategy_errors(layouts, message):
    with pytest.raises(MigStrategyError) as e:
        resource_names("single", A40, layouts)
    assert str(e.value) == message


def test_strategy_argument_errors():
    with pytest.raises(MigError, match='unknown MIG strategy "auto"'):
        resource_names("auto", A40, [Layout.disabled(A40)])
    with pytest.raises(MigError, match="GPU 0 has a layout for A100-SXM4-80GB"):
        resource_names("none", A40, [Layout.disabled(A80)])


# --- GFD labels (§6) ------------------------------------------------------------------------------------------

def test_gfd_labels_none_strategy_are_full_gpu_labels():
    labels = gfd_labels("none", A40, gpus(A40, ["1g.5gb"] * 7, 8))
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["nvidia.com/gpu.memory"] == "40960"
    assert labels["nvidia.com/mig.capable"] == "true"
    assert "nvidia.com/mig.strategy" not in labels


def test_gfd_labels_single():
    labels = gfd_labels("single", A40, gpus(A40, ["1g.5gb"] * 7, 8))
    assert {k: labels[k] for k in ["nvidia.com/mig.strategy", "nvidia.com/gpu.product", "nvidia.com/gpu.count",
                                   "nvidia.com/gpu.memory", "nvidia.com/gpu.multiprocessors",
                                   "nvidia.com/gpu.slices.gi", "nvidia.com/gpu.slices.ci",
                                   "nvidia.com/gpu.replicas", "nvidia.com/gpu.family"]} == {
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
        "nvidia.com/gpu.count": "56",
        "nvidia.com/gpu.memory": "4864",
        "nvidia.com/gpu.multiprocessors": "14",
        "nvidia.com/gpu.slices.gi": "1",
        "nvidia.com/gpu.slices.ci": "1",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.family": "ampere",
    }
    h100 = gfd_labels("single", H100, gpus(H100, ["1g.10gb"] * 7))
    assert (h100["nvidia.com/gpu.product"], h100["nvidia.com/gpu.count"]) == ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "7")
    me = gfd_labels("single", A40, gpus(A40, ["1g.5gb+me"]))
    assert me["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb.me"


@pytest.mark.parametrize("layouts", [g for g, _ in SINGLE_ERRORS])
def test_gfd_labels_single_invalid(layouts):
    labels = gfd_labels("single", A40, layouts)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-INVALID"
    assert [labels[f"nvidia.com/gpu.{k}"] for k in ("count", "replicas", "memory")] == ["0", "0", "0"]
    assert labels["nvidia.com/mig.strategy"] == "single"


def test_gfd_labels_single_without_mig_enabled_gpus_is_like_none():
    labels = gfd_labels("single", A40, [Layout.disabled(A40)] * 2)
    assert labels == {**gfd_labels("none", A40, [Layout.disabled(A40)] * 2), "nvidia.com/mig.strategy": "single"}


def test_gfd_labels_mixed():
    layouts = gpus(A40, ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"], 2) + [Layout.disabled(A40)]
    labels = gfd_labels("mixed", A40, layouts)
    assert labels["nvidia.com/mig.strategy"] == "mixed"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB"
    assert labels["nvidia.com/gpu.count"] == "3"
    assert {k[len("nvidia.com/mig-1g.5gb."):]: v for k, v in labels.items()
            if k.startswith("nvidia.com/mig-1g.5gb.")} == {
        "count": "4", "product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "replicas": "1", "sharing-strategy": "none",
        "memory": "4864", "multiprocessors": "14", "slices.gi": "1", "slices.ci": "1"}
    assert labels["nvidia.com/mig-3g.20gb.count"] == "2"
    assert labels["nvidia.com/mig-3g.20gb.slices.gi"] == "3"
    assert labels["nvidia.com/mig-2g.10gb.multiprocessors"] == "28"
    assert gfd_labels("mixed", A40, gpus(A40, ["1g.5gb+me"]))["nvidia.com/mig-1g.5gb.me.count"] == "1"


# --- mig-parted (§5.4) ----------------------------------------------------------------------------------------

EXAMPLE = """
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  all-1g.5gb:
    - devices: all
      mig-enabled: true
      mig-devices: { "1g.5gb": 7 }
  all-balanced:
    - device-filter: ["0x20B010DE"]
      devices: all
      mig-enabled: true
      mig-devices: { "1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1 }
  split:
    - devices: [0, 1]
      mig-enabled: true
      mig-devices: { "3g.20gb": 2 }
    - devices: [2]
      mig-enabled: false
"""


def test_parse_example_and_round_trip():
    cfg = parse(EXAMPLE)
    assert cfg.names() == ["all-disabled", "all-1g.5gb", "all-balanced", "split"]
    e = cfg.mig_configs["all-balanced"][0]
    assert (e.device_filter, e.devices, e.mig_enabled, e.mig_devices) == \
           (("0x20B010DE",), "all", True, {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1})
    assert cfg.mig_configs["split"][0].devices == (0, 1)
    assert parse(cfg.to_yaml()).to_dict() == cfg.to_dict()
    assert parse({"version": "v1", "mig-configs": {"x": [{"devices": "all", "mig-enabled": False}]}}).names() == ["x"]


PARSE_ERRORS = [
    ("mig-configs: {}\n", "unable to parse with missing 'version' field"),
    ("version: v2\nmig-configs: {}\n", "unknown version: v2"),
    ("version: v1\nconfigs: {}\n", "unexpected field: configs"),
    ("version: v1\nmig-configs: {}\n", "at least one entry in 'mig-configs' is required"),
    ("version: v1\nmig-configs:\n  a: []\n", "at least one entry in 'a' is required"),
    ("version: v1\nmig-configs:\n  a:\n    - mig-enabled: false\n", "mig-configs.a[0]: missing required field: devices"),
    ("version: v1\nmig-configs:\n  a:\n    - devices: all\n", "mig-configs.a[0]: missing required field: mig-enabled"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: some, mig-enabled: false}\n",
     "mig-configs.a[0]: invalid string input for 'devices': some"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: [0, x], mig-enabled: false}\n",
     "mig-configs.a[0]: 'devices' must be \"all\" or a list of GPU indices"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: true}\n",
     "mig-configs.a[0]: missing required field 'mig-devices' when 'mig-enabled' is true"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: false, mig-devices: {1g.5gb: 7}}\n",
     "mig-configs.a[0]: MIG devices included when 'mig-enabled' is false"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: true, migdevices: {}}\n",
     "mig-configs.a[0]: unexpected field: migdevices"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: \"yes\", mig-devices: {}}\n",
     "mig-configs.a[0]: 'mig-enabled' must be true or false"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: true, mig-devices: {1g5gb: 7}}\n",
     "error validating values in 'mig-devices' field: invalid MIG profile name '1g5gb'"),
    ("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: true, mig-devices: {1g.5gb: -1}}\n",
     "count for \"1g.5gb\" must be a non-negative integer"),
    ("version: v1\nmig-configs:\n  a:\n    - {device-filter: 5, devices: all, mig-enabled: false}\n",
     "'device-filter' must be a string or a list of strings"),
    ("version: v1\nmig-configs:\n  a:\n    - all\n", "mig-configs.a[0]: each entry must be a mapping"),
    ("- just a list\n", "unmarshal error: a mig-parted config must be a mapping"),
    ("version: v1\nmig-configs: [\n", "unmarshal error:"),
]


@pytest.mark.parametrize("text,message", PARSE_ERRORS)
def test_parse_errors(text, message):
    with pytest.raises(MigConfigError) as e:
        parse(text)
    assert message in str(e.value)


# model, config name, mig-devices
DEFAULTS = [
    (A40, "all-1g.5gb", {"1g.5gb": 7}),
    (A40, "all-1g.5gb.me", {"1g.5gb+me": 1}),
    (A40, "all-1g.10gb", {"1g.10gb": 4}),
    (A40, "all-2g.10gb", {"2g.10gb": 3}),
    (A40, "all-3g.20gb", {"3g.20gb": 2}),
    (A40, "all-4g.20gb", {"4g.20gb": 1}),
    (A40, "all-7g.40gb", {"7g.40gb": 1}),
    (A40, "all-balanced", {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}),
    (A80, "all-1g.10gb", {"1g.10gb": 7}),
    (A80, "all-1g.10gb.me", {"1g.10gb+me": 1}),
    (A80, "all-1g.20gb", {"1g.20gb": 4}),
    (A80, "all-balanced", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
    (H100, "all-7g.80gb", {"7g.80gb": 1}),
    (H100, "all-balanced", {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}),
    (H200, "all-1g.18gb", {"1g.18gb": 7}),
    (H200, "all-1g.18gb.me", {"1g.18gb+me": 1}),
    (H200, "all-1g.35gb", {"1g.35gb": 4}),
    (H200, "all-2g.35gb", {"2g.35gb": 3}),
    (H200, "all-3g.71gb", {"3g.71gb": 2}),
    (H200, "all-4g.71gb", {"4g.71gb": 1}),
    (H200, "all-7g.141gb", {"7g.141gb": 1}),
    (H200, "all-balanced", {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}),
    (A30, "all-1g.6gb", {"1g.6gb": 4}),
    (A30, "all-1g.6gb.me", {"1g.6gb+me": 1}),
    (A30, "all-2g.12gb", {"2g.12gb": 2}),
    (A30, "all-2g.12gb.me", {"2g.12gb+me": 1}),
    (A30, "all-4g.24gb", {"4g.24gb": 1}),
    (A30, "all-balanced", {"1g.6gb": 2, "2g.12gb": 1}),
    (A40, "all-enabled", {}),
]


@pytest.mark.parametrize("model,name,devices", DEFAULTS)
def test_default_configs(model, name, devices):
    cfg = default_configs(model)
    (entry,) = cfg.mig_configs[name]
    assert (entry.devices, entry.mig_enabled, entry.mig_devices) == ("all", True, devices)
    layouts = apply(cfg, name, model, 8)
    assert all(layout.counts() == {k: v for k, v in sorted(devices.items())} for layout in layouts)
    assert is_applied(cfg, name, model, layouts)


@pytest.mark.parametrize("model", [A40, A80, H100, H200, A30])
def test_every_default_config_applies_to_its_model(model):
    cfg = default_configs(model)
    assert cfg.names()[:2] == ["all-disabled", "all-enabled"] and cfg.names()[-1] == "all-balanced"
    assert DEFAULT_CONFIG in cfg.names()
    for name in cfg.names():
        for layout in apply(cfg, name, model, 2):
            assert valid(model, layout)
    assert parse(cfg.to_yaml()).to_dict() == cfg.to_dict()


def test_default_configs_non_mig_model():
    assert default_configs("T4").names() == ["all-disabled"]


def test_operator_default_config_uses_device_filters_where_models_differ():
    cfg = operator_default_config()
    one_g = cfg.mig_configs["all-1g.10gb"]
    assert [(e.device_filter, e.mig_devices) for e in one_g] == [
        (("0x20B010DE",), {"1g.10gb": 4}), (("0x20B210DE", "0x233010DE"), {"1g.10gb": 7})]
    assert [e.device_filter for e in cfg.mig_configs["all-1g.5gb"]] == [()]
    assert len(cfg.mig_configs["all-balanced"]) == 4
    sizes = [len(apply(cfg, "all-balanced", m, 1)[0].instances) for m in (A40, A80, H100, H200, A30)]
    assert sizes == [4, 4, 4, 4, 3]
    assert apply(cfg, "all-1g.10gb", A40, 1)[0].counts() == {"1g.10gb": 4}
    assert apply(cfg, "all-1g.10gb", H100, 1)[0].counts() == {"1g.10gb": 7}
    # A filtered config that matches no entry on this model changes nothing.
    assert selected_gpus(cfg, "all-1g.10gb", A30, 2) == []
    assert apply(cfg, "all-1g.10gb", A30, 2) == [Layout.disabled(A30)] * 2


def test_apply_wrong_model_fails_like_mig_manager():
    cfg = operator_default_config()
    with pytest.raises(MigApplyError) as e:
        apply(cfg, "all-1g.5gb", A80, 8)
    assert str(e.value).startswith('mig-config "all-1g.5gb" entry 0 on GPU 0 (A100-SXM4-80GB): '
                                   'MIG profile "1g.5gb" does not exist on A100-SXM4-80GB')
    assert (e.value.gpu, e.value.profile) == (0, "1g.5gb")


def test_apply_errors():
    cfg = parse(EXAMPLE)
    with pytest.raises(MigApplyError, match="selected mig-config not present: all-3g.40gb"):
        apply(cfg, "all-3g.40gb", A40, 1)
    too_many = parse("version: v1\nmig-configs:\n  x:\n    - {devices: all, mig-enabled: true, "
                     "mig-devices: {4g.20gb: 1, 3g.20gb: 1, 1g.5gb: 1}}\n")
    with pytest.raises(MigApplyError, match=r"GPU 0 \(A100-SXM4-40GB\): requested instances need 8 compute slices"):
        apply(too_many, "x", A40, 1)
    with pytest.raises(MigApplyError, match=r'"all-1g.5gb" entry 0 on GPU 0 \(T4\): MIG not supported'):
        apply(cfg, "all-1g.5gb", "T4", 1)
    assert apply(cfg, "all-disabled", "T4", 2) == [Layout.disabled("T4")] * 2


def test_apply_device_selection_and_current_state():
    cfg = parse(EXAMPLE)
    current = [place(A40, ["7g.40gb"])] * 4
    layouts = apply(cfg, "split", A40, 4, current=current)
    assert [layout.counts() for layout in layouts[:2]] == [{"3g.20gb": 2}] * 2
    assert layouts[2] == Layout.disabled(A40)
    assert layouts[3] == current[3]                      # no entry matches GPU 3: left alone
    assert selected_gpus(cfg, "split", A40, 4) == [0, 1, 2]
    assert is_applied(cfg, "split", A40, layouts)
    assert not is_applied(cfg, "split", A40, current)
    # device-filter: all-balanced is only for 0x20B010DE (A100-SXM4-40GB).
    assert apply(cfg, "all-balanced", A40, 1)[0].counts() == {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    assert apply(cfg, "all-balanced", A80, 1) == [Layout.disabled(A80)]
    with pytest.raises(ValueError, match="current has 1 layouts for 2 GPUs"):
        apply(cfg, "split", A40, 2, current=[Layout.disabled(A40)])


def test_catalog_pci_device_ids():
    assert {m: CATALOG[m].pci_device_id for m in (A40, A80, A30, H100, H200)} == {
        A40: "0x20B010DE", A80: "0x20B210DE", A30: "0x20B710DE", H100: "0x233010DE", H200: "0x233510DE"}
