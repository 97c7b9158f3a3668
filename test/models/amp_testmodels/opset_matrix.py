"""Write a model back through amp-opt at one target opset and precision, run
it in onnxruntime and compare it with the original model in onnxruntime.

Used by ``test/python/test_export_opsets.py``; runs under the interpreter
that has PyPI ``onnx``, ``numpy`` and ``onnxruntime``. Also a command line
for trying one model by hand::

    python3 test/models/amp_testmodels/opset_matrix.py build/bin/amp-opt m.onnx \
        --targets 11,13,17 --precisions fp32,fp16

prints one line per (target, precision): the relative error
``max |out - ref| / max |ref|`` (worst float output), or amp-opt's error.
"""

import argparse
import os
import subprocess
import sys

import numpy as np
import onnx

# amp-opt flags per precision: fp32 is import + write only; fp16 is the
# default autocast (fp16, keep-io-types).
PRECISION_FLAGS = {"fp32": ("--amp-opt-level=0",), "fp16": ()}
VOCABULARY = 1000  # token ids of the torch exports (export_torch.py)


def input_specs(path):
    """[(name, numpy dtype, shape)] of the graph inputs of ``path`` (static shapes)."""
    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        shape = [d.dim_value for d in tensor_type.shape.dim]
        assert all(shape), f"{path}: {value.name}: dynamic shape"
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        specs.append((value.name, dtype, shape))
    return specs


def make_feeds(path, seed=0):
    """Seeded inputs for ``path``: standard normal floats, token ids in
    [0, VOCABULARY) for int64, and for a bool (B, T) key padding mask the
    last ``b + 1`` positions of row ``b`` masked (never a whole row)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, dtype, shape in input_specs(path):
        if dtype == np.bool_:
            mask = np.zeros(shape, dtype=np.bool_)
            if len(shape) == 2:
                for row in range(shape[0]):
                    mask[row, shape[1] - min(row + 1, shape[1] - 1):] = True
            feeds[name] = mask
        elif np.issubdtype(dtype, np.integer):
            feeds[name] = rng.integers(0, VOCABULARY, shape).astype(dtype)
        else:
            feeds[name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def ort_run(path, feeds):
    """Output name -> array from onnxruntime's CPU provider."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds)))


def compare(reference, result):
    """The worst relative error over the float outputs and its details.

    Returns ``(rel, detail)``, ``rel = max |out - ref| / max |ref|`` of the
    worst float output (0 when there is none). Integer and bool outputs must
    be equal, shapes and dtypes must match and non-finite values must sit at
    the same places; a mismatch raises AssertionError. An all-zero reference
    output must be matched exactly.
    """
    worst, detail = 0.0, "no float output"
    assert set(result) == set(reference), f"outputs {sorted(result)} != {sorted(reference)}"
    for name, ref in reference.items():
        got = result[name]
        assert got.shape == ref.shape, f"{name}: shape {got.shape} != {ref.shape}"
        assert got.dtype == ref.dtype, f"{name}: dtype {got.dtype} != {ref.dtype}"
        if not np.issubdtype(ref.dtype, np.floating):
            np.testing.assert_array_equal(got, ref, err_msg=name)
            continue
        finite = np.isfinite(ref)
        assert (np.isfinite(got) == finite).all(), f"{name}: non-finite values differ"
        diff = np.abs(got[finite].astype(np.float64) - ref[finite].astype(np.float64))
        scale = float(np.abs(ref[finite]).max(initial=0.0))
        err = float(diff.max(initial=0.0))
        if scale == 0.0:
            assert err == 0.0, f"{name}: reference is 0, max |out| {err:.3g}"
            continue
        if err / scale >= worst:
            worst = err / scale
            detail = f"{name}: max abs {err:.3g}, max|ref| {scale:.3g}"
    return worst, detail


def write(amp_opt, source, out, target, precision, *extra, timeout=600):
    """Run ``amp-opt SOURCE -o OUT --amp-export-opset=TARGET`` with the
    precision's flags; return the CompletedProcess (text)."""
    command = [str(amp_opt), str(source), "-o", str(out), f"--amp-export-opset={target}",
               *PRECISION_FLAGS[precision], *map(str, extra)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def expose_head_input(source, destination):
    """Save ``source`` with the input of its last Gemm/MatMul added as a
    second graph output (torchvision zero-initialises the ViT head, so its
    logits are all 0 and compare nothing)."""
    model = onnx.load(str(source))
    head = [n for n in model.graph.node if n.op_type in ("Gemm", "MatMul")][-1]
    inferred = onnx.shape_inference.infer_shapes(model)
    info = next(v for v in inferred.graph.value_info if v.name == head.input[0])
    model.graph.output.append(info)
    onnx.save_model(model, str(destination))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("amp_opt")
    parser.add_argument("model")
    parser.add_argument("--targets", default="11,13,17,18,20,28")
    parser.add_argument("--precisions", default="fp32,fp16")
    parser.add_argument("--out", default="/tmp/opset_matrix.onnx")
    args = parser.parse_args(argv)
    feeds = make_feeds(args.model)
    reference = ort_run(args.model, feeds)
    for target in map(int, args.targets.split(",")):
        for precision in args.precisions.split(","):
            if os.path.exists(args.out):
                os.remove(args.out)
            proc = write(args.amp_opt, args.model, args.out, target, precision)
            if proc.returncode != 0:
                print(f"{target:3d} {precision}: refused (exit {proc.returncode}): "
                      f"{proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else ''}")
                continue
            try:
                rel, detail = compare(reference, ort_run(args.out, feeds))
                print(f"{target:3d} {precision}: rel {rel:.3g} ({detail})")
            except Exception as error:  # noqa: BLE001  (a by-hand tool: say what failed)
                print(f"{target:3d} {precision}: FAILED {type(error).__name__}: "
                      f"{str(error)[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
