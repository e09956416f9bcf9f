# lit configuration for kiln's FileCheck suites.
#
# In a build, lit.site.cfg.py (written by CMake) sets the paths and loads this
# file. From the GPU bundle there is no build folder: `--param` gives them
# (kiln_tools_dir, llvm_tools_dir, kiln_obj_root); see scripts/gpu-run.sh.
import os

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["examples", "unit", "CMakeLists.txt", "lit.cfg.py"]


def setting(name):
    value = lit_config.params.get(name, getattr(config, name, None))
    if value is None:
        lit_config.fatal(f"kiln lit: '{name}' is not set; run through ctest or pass --param {name}=...")
    return value


config.test_exec_root = os.path.join(setting("kiln_obj_root"), "test")
config.environment["PATH"] = os.pathsep.join(
    [setting("kiln_tools_dir"), setting("llvm_tools_dir"), os.environ["PATH"]])
