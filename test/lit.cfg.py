# lit configuration for kiln's FileCheck suites (see test/lit.site.cfg.py.in).
import os

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(
    lit_config.params.get("kiln_obj_root", config.kiln_obj_root), "test")
config.excludes = ["examples", "unit", "CMakeLists.txt", "lit.cfg.py"]

tools = lit_config.params.get("kiln_tools_dir", config.kiln_tools_dir)
llvm_tools = lit_config.params.get("llvm_tools_dir", config.llvm_tools_dir)
config.environment["PATH"] = os.pathsep.join(
    [tools, llvm_tools, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%kiln_src", config.kiln_src_root))
