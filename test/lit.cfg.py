# -*- Python -*-
"""lit configuration for amp: FileCheck tests of the dialect, the ONNX
importer and the amp-opt driver."""

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "AMP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".textproto", ".test", ".td"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "lit-tools", "unit", "python", "models", "conformance", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.amp_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%amp_src_root", config.amp_src_root))
config.substitutions.append(
    ("%onnx-print",
     f"{config.python_executable} {config.amp_src_root}/test/lit-tools/onnx-print.py"))
config.substitutions.append(
    ("%onnx-encode",
     f"{config.python_executable} {config.amp_src_root}/test/lit-tools/onnx-encode.py"))

llvm_config.with_system_environment(["HOME", "PYTHONPATH"])
llvm_config.use_default_substitutions()

tool_dirs = [config.amp_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions([ToolSubst("amp-opt", unresolved="fatal"), ToolSubst("amp-tblgen", unresolved="fatal"), "split-file", "not", "FileCheck"], tool_dirs)
