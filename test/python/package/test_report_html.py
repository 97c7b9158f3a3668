"""The autocast report as an HTML page (amp-opt --amp-report-html,
Report.to_html()): the same bytes from both, self-contained, and loaded in
Debian's headless Chromium with no console message, the counts of the JSON
report on the page, and a bounded page for 50,000-node models. A
screenshot is written (AMP_REPORT_SCREENSHOT=path keeps it, for the docs).
"""

import json
import os
import re
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import amp_mlir
from test_api import mlp_model


def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed (scripts/amp.sh installs Debian's chromium)")
    return path


def load_page(html_path, url_suffix="", screenshot=None):
    """The DOM after the page's script ran, and Chromium's console lines."""
    base = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0", "--virtual-time-budget=20000"]
    url = f"file://{html_path}{url_suffix}"
    proc = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    if screenshot:
        shot = subprocess.run(base + ["--window-size=1280,900", f"--screenshot={screenshot}", url],
                              capture_output=True, text=True, timeout=180)
        assert shot.returncode == 0, shot.stderr[-2000:]
    return proc.stdout, console


def text_of(dom, element_id):
    match = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', dom)
    assert match, element_id
    return match.group(1)


def check_page(dom, console, report):
    assert console == [], console
    assert 'data-ready="true"' in dom
    summary = report["summary"]
    low = report["type"]
    assert text_of(dom, f"count-{low}") == str(summary["ops"][low])
    assert text_of(dom, "count-f32") == str(summary["ops"]["f32"])
    assert text_of(dom, "count-unchanged") == str(summary["ops"]["without_fp32_data"])
    assert text_of(dom, "count-casts") == str(summary["casts"])
    assert text_of(dom, "count-constants") == str(summary["constants_converted"])
    assert text_of(dom, "flop-share") == f"{100 * summary['flops_low_precision_share']:.1f}%"
    n = len(report["ops"])
    assert text_of(dom, "table-count") == f"{min(n, 200)} of {n} matching ops shown ({n} in all)"
    boxes = dom.count('class="box"')
    assert 1 <= boxes <= 300, boxes
    assert dom.count("<tr>") <= 201
    return boxes


def embedded_json(html):
    match = re.search(r'<script id="amp-report" type="application/json">(.*?)</script>', html, re.S)
    assert match
    return json.loads(match.group(1))


def test_html_equals_amp_opt_and_is_self_contained(amp_opt, tmp_path):
    path = tmp_path / "mlp.onnx"
    mlp_model(path)
    html_path = tmp_path / "r.html"
    proc = amp_opt.run(str(path), "-o", str(tmp_path / "o.mlir"), "--amp-type=bf16",
                       f"--amp-report-html={html_path}", f"--amp-report={tmp_path / 'r.json'}")
    assert proc.returncode == 0, proc.stderr
    module = amp_mlir.import_onnx(path)
    report = amp_mlir.autocast(module, "bf16")
    assert report.to_html() == html_path.read_text()
    report.to_html(tmp_path / "py.html")
    assert (tmp_path / "py.html").read_text() == html_path.read_text()
    assert embedded_json(report.to_html()) == json.loads((tmp_path / "r.json").read_text())
    html = report.to_html()
    # Nothing is fetched: no external script, style, image or font.
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)
    assert "@import" not in html and "url(" not in html
    # The records carry their producers (through inserted casts).
    ops = report.to_dict()["ops"]
    index = {op["node"]: i for i, op in enumerate(ops)}
    assert ops[index["fc1/add"]]["inputs"] == [index["fc1/matmul"]]
    assert ops[index["relu"]]["inputs"] == [index["fc1/add"]]


def test_page_in_chromium(tmp_path):
    path = tmp_path / "mlp.onnx"
    mlp_model(path)
    module = amp_mlir.import_onnx(path)
    report = amp_mlir.autocast(module, "fp16")
    html_path = tmp_path / "r.html"
    report.to_html(html_path)
    screenshot = os.environ.get("AMP_REPORT_SCREENSHOT") or str(tmp_path / "report.png")
    dom, console = load_page(html_path, screenshot=screenshot)
    check_page(dom, console, report.to_dict())
    assert dom.count('class="edge"') >= 5
    with open(screenshot, "rb") as f:
        png = f.read()
    assert png.startswith(b"\x89PNG") and len(png) > 10000


def hierarchical_model(path, flat=False):
    """50,000 nodes: 50 blocks x 10 layers x 100 ops (MatMul, Add, Relu,
    Exp, Neg: fp16 and fp32 ops and casts), named block<b>/layer<l>/<op><k>
    (or <op>_<i> when flat)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32) * 0.1, "w")]
    nodes, prev = [], "x"
    kinds = ["MatMul", "Add", "Relu", "Exp", "Neg"]
    for b in range(50):
        for layer in range(10):
            for k in range(100):
                kind = kinds[k % len(kinds)]
                i = len(nodes)
                name = f"{kind}_{i}" if flat else f"block{b}/layer{layer}/{kind}{k}"
                out = f"t{i}"
                inputs = [prev, "w"] if kind == "MatMul" else [prev, prev] if kind == "Add" else [prev]
                nodes.append(helper.make_node(kind, inputs, [out], name=name))
                prev = out
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.mark.parametrize("flat", [False, True], ids=["hierarchy", "flat"])
def test_fifty_thousand_nodes_stay_usable(tmp_path, flat):
    path = tmp_path / "big.onnx"
    hierarchical_model(path, flat)
    module = amp_mlir.import_onnx(path)
    report = amp_mlir.autocast(module, "fp16")
    data = report.to_dict()
    assert len(data["ops"]) == 50000
    html_path = tmp_path / "big.html"
    report.to_html(html_path)
    dom, console = load_page(html_path)
    boxes = check_page(dom, console, data)
    # The top level: 50 blocks, or runs of consecutive ops when flat.
    assert boxes == (50 if not flat else 300)
    if not flat:
        # A link opens a group: 100 ops of one layer, with their edges.
        dom, console = load_page(html_path, "#open=block7/layer3")
        assert console == []
        assert dom.count('class="box"') == 100
        assert dom.count('data-kind="op"') == 100
        assert ">block7</a>" in dom and ">layer3</a>" in dom


def test_names_cannot_break_the_page(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="</script><!--<script>alert(1)</script>"),
         helper.make_node("MatMul", ["r", "w"], ["y"], name='a/"quoted"&amp;/mm')], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(np.eye(2, dtype=np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    module = amp_mlir.import_onnx(model)
    report = amp_mlir.autocast(module, "fp16")
    html_path = tmp_path / "r.html"
    report.to_html(html_path)
    dom, console = load_page(html_path)
    check_page(dom, console, report.to_dict())
    assert "&lt;/script&gt;&lt;!--&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert embedded_json(html_path.read_text()) == report.to_dict()
