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
config.substitutions.append(("%mlir_include", config.mlir_include_dir))
config.substitutions.append(
    ("%onnx-print",
     f"{config.python_executable} {config.amp_src_root}/test/lit-tools/onnx-print.py"))
config.substitutions.append(
    ("%onnx-encode",
     f"{config.python_executable} {config.amp_src_root}/test/lit-tools/onnx-encode.py"))

# The sanitizer settings of scripts/amp.sh sanitize reach the tools.
llvm_config.with_system_environment(["HOME", "PYTHONPATH", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                     "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()

tool_dirs = [config.amp_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions([ToolSubst("amp-opt", unresolved="fatal"), ToolSubst("amp-tblgen", unresolved="fatal"), ToolSubst("amp-run", unresolved="fatal"), ToolSubst("amp-capi-test", unresolved="fatal"), ToolSubst("amp-run-gpu", unresolved="ignore"), ToolSubst("mlir-opt", unresolved="fatal"), "split-file", "not", "FileCheck"], tool_dirs)

# libAmpPlugin.so loaded into the upstream mlir-opt (test/Plugin). Binding
# every symbol at load time turns one the host tool lacks into a failed load.
amp_plugin = os.path.join(config.amp_obj_root, "lib", "libAmpPlugin.so")
config.substitutions.append(("%amp_plugin", amp_plugin))
# A sanitized plugin needs the sanitizers' runtimes in the uninstrumented
# host, loaded first (scripts/amp.sh sanitize); the host's own allocations
# are not amp's to leak-check.
plugin_env = "LD_BIND_NOW=1"
if getattr(config, "amp_sanitize", ""):
    import subprocess
    runtimes = []
    libraries = {"address": "libasan.so", "undefined": "libubsan.so"}
    for sanitizer in config.amp_sanitize.split(","):
        if sanitizer in libraries:
            path = subprocess.run([config.cxx_compiler,
                                   f"-print-file-name={libraries[sanitizer]}"],
                                  capture_output=True, text=True).stdout.strip()
            if not os.path.isabs(path):
                lit_config.fatal(f"{libraries[sanitizer]} not found for the sanitized "
                                 "plugin test")
            runtimes.append(path)
    options = os.environ.get("ASAN_OPTIONS", "")
    plugin_env += (f" LD_PRELOAD={':'.join(runtimes)} "
                   f"ASAN_OPTIONS={options + ':' if options else ''}detect_leaks=0")
config.substitutions.append(
    ("%mlir-opt-amp",
     f"env {plugin_env} {os.path.join(config.llvm_tools_dir, 'mlir-opt')} "
     f"--load-dialect-plugin={amp_plugin} --load-pass-plugin={amp_plugin}"))

# The CUDA target: the toolkit (ptxas, libdevice) makes cubins and links
# math functions; amp-run-gpu is built where the toolkit is; "no-gpu" marks
# machines where running an artifact must fail cleanly.
import shutil
cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
if os.path.exists(os.path.join(cuda_home, "bin", "ptxas")) and os.path.exists(
        os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("cuda-toolkit")
if os.path.exists(os.path.join(config.amp_tools_dir, "amp-run-gpu")):
    config.available_features.add("amp-run-gpu")
if not shutil.which("nvidia-smi") and not os.path.exists("/dev/nvidiactl"):
    config.available_features.add("no-gpu")
