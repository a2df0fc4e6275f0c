"""gpusim.views.topology: the server graph with a pod's GPUs highlighted, the fabric with a job's ring, step time."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from gpusim.hardware import collectives as c  # noqa: E402
from gpusim.hardware import fabric as f  # noqa: E402
from gpusim.hardware import topology as t  # noqa: E402
from gpusim.views import topology as v  # noqa: E402


def _gpu_boxes(ax):
    return {txt.get_text().split("\n")[0]: to_hex(txt.get_bbox_patch().get_facecolor())
            for txt in ax.texts if txt.get_text().startswith("GPU") and txt.get_bbox_patch() is not None}


@pytest.mark.parametrize("board", [b for b in t.BOARDS if b != "pcie"])
def test_server_drawing_highlights_the_pods_gpus(board):
    g = t.server_graph(board)
    ax = v.draw_server(g, highlight=[1, 2])
    boxes = _gpu_boxes(ax)
    assert len(boxes) == len(t.gpus(g))
    assert {k for k, col in boxes.items() if col == v.HIGHLIGHT} == {"GPU1", "GPU2"}
    assert "GPUs 1, 2 highlighted" in ax.get_title().replace("\n", " ")
    pos = v.server_layout(g)
    assert set(pos) == set(g.nodes) and len(set(pos.values())) == len(pos)     # every node placed, no overlap
    plt.close("all")


def test_fabric_drawing_colours_crossing_flows():
    h = t.server_graph("dgx-h100")
    fab = f.build_fabric([(f"n{i}", h) for i in range(4)], f.FabricSpec(scalable_unit=2))
    aligned = c.allreduce([(f"n{i}", h, range(8)) for i in range(2)], 1e9, fab)       # inside SU 0
    ax = v.draw_fabric(fab, aligned)
    red = [l for l in ax.lines if to_hex(l.get_color()) == "#d62728"]
    green = [l for l in ax.lines if to_hex(l.get_color()) == "#2ca02c"]
    assert (len(green), len(red)) == (16, 0) and "0 cross the spine" in ax.get_title()
    plt.close("all")
    mismatch = c.allreduce([("n0", h, range(4)), ("n2", h, range(4, 8))], 1e9, fab)
    ax = v.draw_fabric(fab, mismatch)
    assert sum(to_hex(l.get_color()) == "#d62728" for l in ax.lines) == 8
    plt.close("all")


def test_step_time_plot_stacks_compute_and_allreduce():
    rows = [{"label": "packed", "compute": 1.0, "allreduce": 0.2, "busbw": 380.0},
            {"label": "blind", "compute": 1.0, "allreduce": 0.6}]
    ax = v.plot_step_time(rows)
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([1.0, 1.0, 0.2, 0.6])
    assert [tk.get_text() for tk in ax.get_yticklabels()] == ["packed", "blind"]
    assert any("busbw 380 GB/s" in txt.get_text() for txt in ax.texts)
    plt.close("all")
    r = c.allreduce([("a", t.server_graph("dgx-h100"), range(8))], 1e9)
    assert v.step_rows({"one node": r}, 0.5, overlap=0.5)[0]["allreduce"] == pytest.approx(r.seconds / 2)
