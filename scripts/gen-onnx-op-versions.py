#!/usr/bin/env python3
"""Writes lib/Target/ONNX/OnnxOpVersions.inc, OnnxFloatTypes.inc and
OnnxAttributes.inc from the installed `onnx` package.

The importer uses the first table to find which version of an operator a
model's opset selects (the newest version not above the opset) and rejects
nodes whose selected version is newer than the one amp models. The exporter
uses the second (the first operator version whose type constraints admit
float16, resp. bfloat16) to refuse writing a 16-bit float operator at an
opset that does not allow it. The third records, per operator and attribute,
the operator versions at which the attribute appears, disappears or changes
its default; the writer uses it to write an attribute whenever the target
version's default differs from the value (Softmax's axis: 1 before opset 13,
-1 after) and to refuse attributes the target version does not have.
Regenerate after upgrading `onnx`:
python3 scripts/gen-onnx-op-versions.py
"""

import os
import onnx
import onnx.defs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "lib", "Target", "ONNX", "OnnxOpVersions.inc")
FLOAT_OUT = os.path.join(ROOT, "lib", "Target", "ONNX", "OnnxFloatTypes.inc")
ATTR_OUT = os.path.join(ROOT, "lib", "Target", "ONNX", "OnnxAttributes.inc")
DOC_OUT = os.path.join(ROOT, "docs", "OnnxExportVersions.md")
ODS = os.path.join(ROOT, "include", "amp", "Dialect", "Amp", "IR", "AmpOps.td")
MIN_OPSET = 11  # kMinSupportedOpset

# Changes of meaning that no attribute default shows, and how the writer
# handles each (the rules of lib/Target/ONNX/ONNXVersionRules.cpp). Kept
# here so that the generated page lists them next to the table.
MEANING_CHANGES = [
    ("Softmax, LogSoftmax, Hardmax", "13",
     "Before 13 the input is flattened to 2-D at `axis` (default 1) and each "
     "row normalised; from 13 the op works along one axis (default -1).",
     "The axis is always written. For the last axis both forms agree; any "
     "other axis is moved last by a Transpose, the op runs on the last axis "
     "and a second Transpose moves it back. The importer rebuilds the old "
     "form as Flatten -> op(axis=1) -> Reshape."),
    ("ReduceSum (13), other Reduce* (18)", "13 / 18",
     "`axes` moved from an attribute to an input.",
     "A constant `axes` input is written as the attribute; a computed one is "
     "an error. `noop_with_empty_axes = 1` before 18 is an error."),
    ("Squeeze, Unsqueeze", "13", "`axes` moved from an attribute to an input.",
     "Constant input written as the attribute; a computed one is an error."),
    ("Split", "13 / 18",
     "`split` moved to an input at 13; `num_outputs` added at 18.",
     "Constant sizes written as the attribute before 13; `num_outputs` is "
     "dropped before 18 (the outputs give the count)."),
    ("Dropout", "12", "`ratio` moved to an input; `training_mode` added.",
     "A constant scalar ratio is written as the attribute; a ratio or "
     "training_mode input that is not constant is an error."),
    ("Resize", "13", "`roi` and `scales` were required inputs before 13.",
     "Absent ones are written as empty float initializers."),
    ("GridSample", "20",
     "Modes renamed: bilinear -> linear, bicubic -> cubic.",
     "Written with the old names before 20 (and read back with the new "
     "ones)."),
    ("GroupNormalization", "21",
     "Before 21 scale and bias have one value per group; from 21 one per "
     "channel.",
     "amp holds the per-channel form: writing it before 21 is an error "
     "(the importer refuses the old form too)."),
    ("Pad", "18 / 19", "`axes` input added at 18; mode `wrap` at 19.",
     "An `axes` input before 18 or `wrap` before 19 is an error."),
    ("ScatterND, ScatterElements", "16 / 18",
     "`reduction` added at 16 (none, add, mul); max and min at 18.",
     "A reduction the target version does not have is an error."),
    ("BatchNormalization", "14",
     "`training_mode` replaced the output count as the training switch.",
     "amp writes the inference form; `training_mode = 1` before 14 is an "
     "error (attribute rule)."),
    ("Cast", "19", "`saturate` added (float8 only).",
     "Dropped before 19 (float8 values cannot be written before 19)."),
    ("storage types", "19 / 21 / 25",
     "The 8-bit floats came at 19, INT4/UINT4 at 21, INT2/UINT2 at 25.",
     "A value of such a type at an older target opset is an error naming "
     "the opset that has it."),
    ("16-bit floats", "per op",
     "float16 and bfloat16 are admitted by each operator from some version "
     "on (bfloat16 Conv from 22, TopK from 24, ...).",
     "An op whose selected version does not admit the type is an error "
     "naming the first opset that does (OnnxFloatTypes.inc)."),
]


def default_text(attr) -> str:
    """An attribute default in the writer's canonical text form (see
    canonicalAttributeText in ONNXExporter.cpp)."""
    value = attr.default_value
    kinds = onnx.AttributeProto
    if value.type == kinds.INT:
        return str(value.i)
    if value.type == kinds.FLOAT:
        return "%.9g" % value.f
    if value.type == kinds.STRING:
        return value.s.decode()
    if value.type == kinds.INTS:
        return ",".join(str(v) for v in value.ints)
    if value.type == kinds.FLOATS:
        return ",".join("%.9g" % v for v in value.floats)
    if value.type == kinds.STRINGS:
        return ",".join(v.decode() for v in value.strings)
    raise ValueError(f"unexpected default type {value.type}")


def attribute_state(schema, name):
    """(kind, default) of attribute `name` in `schema`: ABSENT, REQUIRED,
    OPTIONAL (no default) or DEFAULT."""
    attr = schema.attributes.get(name)
    if attr is None:
        return ("ABSENT", "")
    if attr.required:
        return ("REQUIRED", "")
    if attr.default_value.type == 0:
        return ("OPTIONAL", "")
    return ("DEFAULT", default_text(attr))


def write_attributes() -> None:
    """One entry each time an attribute's state changes between versions."""
    schemas = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            schemas.setdefault(schema.name, []).append(schema)
    with open(ATTR_OUT, "w", encoding="utf-8") as f:
        f.write(f"// Generated by scripts/gen-onnx-op-versions.py from onnx "
                f"{onnx.__version__}. Do not edit.\n")
        f.write("// Each entry: ONNX op type, attribute, the operator version "
                "from which the\n// state holds, the state (ABSENT, REQUIRED, "
                "OPTIONAL: no default, DEFAULT) and\n// the default in the "
                "writer's canonical text form. Entries are sorted.\n")
        for name in sorted(schemas):
            history = sorted(schemas[name], key=lambda s: s.since_version)
            attrs = sorted({a for s in history for a in s.attributes})
            for attr in attrs:
                previous = ("ABSENT", "")
                for schema in history:
                    state = attribute_state(schema, attr)
                    if state != previous:
                        text = state[1].replace("\\", "\\\\").replace('"', '\\"')
                        f.write(f'AMP_ONNX_ATTR("{name}", "{attr}", '
                                f'{schema.since_version}, {state[0]}, "{text}")\n')
                    previous = state


def main() -> None:
    versions = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            versions.setdefault(schema.name, set()).add(schema.since_version)
    width = max(len(v) for v in versions.values()) + 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(f"// Generated by scripts/gen-onnx-op-versions.py from onnx "
                f"{onnx.__version__}. Do not edit.\n")
        f.write("// Each entry: ONNX op type, then the opset versions that "
                "changed it (unused slots\n// are 0).\n")
        f.write(f"AMP_ONNX_LATEST_OPSET({onnx.defs.onnx_opset_version()})\n")
        f.write(f"AMP_ONNX_VERSION_SLOTS({width})\n")
        for name in sorted(versions):
            vs = ", ".join(str(v) for v in sorted(versions[name]))
            f.write(f'AMP_ONNX_OP("{name}", {vs})\n')

    first = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain not in ("", "ai.onnx"):
            continue
        types = {t for c in schema.type_constraints for t in c.allowed_type_strs}
        entry = first.setdefault(schema.name, [0, 0])
        for i, name in enumerate(("tensor(float16)", "tensor(bfloat16)")):
            if name in types and (entry[i] == 0 or schema.since_version < entry[i]):
                entry[i] = schema.since_version
    with open(FLOAT_OUT, "w", encoding="utf-8") as f:
        f.write(f"// Generated by scripts/gen-onnx-op-versions.py from onnx "
                f"{onnx.__version__}. Do not edit.\n")
        f.write("// Each entry: ONNX op type, the first operator version whose "
                "type constraints\n// admit float16, and the first that admits "
                "bfloat16 (0: none).\n")
        for name in sorted(first):
            f16, bf16 = first[name]
            f.write(f'AMP_ONNX_FLOAT_TYPES("{name}", {f16}, {bf16})\n')
    write_attributes()
    write_doc()


def amp_op_types():
    """The ONNX op types amp models (from the ODS definitions)."""
    import re
    with open(ODS, encoding="utf-8") as f:
        return sorted(set(re.findall(r'def Amp_\w+\s*:\s*Amp_\w+<\s*"(\w+)"', f.read())))


def write_doc() -> None:
    """docs/OnnxExportVersions.md: every attribute of an op amp writes whose
    default or existence changed between the versions opsets >= 11 select,
    with the writer's rule, and the hand-kept list of changes of meaning."""
    schemas = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            schemas.setdefault(schema.name, []).append(schema)
    rows = []
    for name in amp_op_types():
        history = sorted(schemas.get(name, []), key=lambda s: s.since_version)
        older = [s for s in history if s.since_version <= MIN_OPSET]
        selected = older[-1:] + [s for s in history if s.since_version > MIN_OPSET]
        for attr in sorted({a for s in selected for a in s.attributes}):
            states = [(s.since_version, attribute_state(s, attr)) for s in selected]
            if len({state for _, state in states}) < 2:
                continue
            steps = []
            previous = None
            for version, (kind, default) in states:
                if (kind, default) == previous:
                    continue
                previous = (kind, default)
                text = {"ABSENT": "absent", "REQUIRED": "required",
                        "OPTIONAL": "no default"}.get(kind, f"default `{default}`")
                steps.append(f"{version}: {text}")
            kinds = {kind for _, (kind, _) in states}
            if "ABSENT" in kinds:
                rule = ("left out where absent when it holds the value older "
                        "versions implied; any other value is an error naming "
                        "the first opset that has it")
                if name in ("Split", "Squeeze", "Unsqueeze", "Dropout") or name.startswith("Reduce"):
                    rule = "moved between attribute and input (see Changes of meaning)"
                if name == "Cast":
                    rule = "dropped before 19 (float8 only)"
            else:
                rule = "written whenever the value differs from the target version's default"
            rows.append((name, attr, "; ".join(steps), rule))
    with open(DOC_OUT, "w", encoding="utf-8") as f:
        f.write("<!-- Generated by scripts/gen-onnx-op-versions.py from onnx "
                f"{onnx.__version__}. Do not edit. -->\n")
        f.write("# Writing older opsets: what changed between operator versions\n\n")
        f.write(
            "amp holds every op in its newest form. The ONNX writer "
            "(`amp-opt ... -o m.onnx [--amp-export-opset=N]`) writes the "
            "operator version that opset N selects, and that version's "
            "attribute defaults, not the newest ones. Every attribute is "
            "compared with the default of the *target* version "
            "(`lib/Target/ONNX/OnnxAttributes.inc`, generated from the `onnx` "
            "package) and written when it differs. An attribute that the "
            "target version does not have is left out when it holds the "
            "value older versions implied, and is an error otherwise.\n\n"
            "The audit behind this page went through the operator version "
            "table for every op amp writes (opsets 11 to "
            f"{onnx.defs.onnx_opset_version()}). Tests: "
            "`test/Target/ONNX/export-opset-versions.mlir`, "
            "`test/Target/ONNX/export-errors.mlir`, and "
            "`test/python/test_export_opsets.py`, which writes real "
            "architectures at opsets 11, 13, 17, 18, 20 and the newest and "
            "runs them in onnxruntime against the original.\n\n")
        f.write("## Changes of meaning\n\n")
        f.write("| op | opset | what changed | what the writer does |\n|---|---|---|---|\n")
        for op, version, change, handling in MEANING_CHANGES:
            f.write(f"| {op} | {version} | {change} | {handling} |\n")
        f.write("\n## Attribute defaults and existence\n\n")
        f.write("Each row: an attribute of an op amp writes whose state differs "
                f"between the versions opsets {MIN_OPSET} and newer select "
                "(version: state).\n\n")
        f.write("| op | attribute | versions | writer |\n|---|---|---|---|\n")
        for row in rows:
            f.write("| " + " | ".join(row) + " |\n")


if __name__ == "__main__":
    main()
