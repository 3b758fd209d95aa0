# lit configuration for pkc's FileCheck tests.
import os

import lit.formats

config.name = "pkc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".pk", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.pk_test_exec_root

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
# Diagnostics are compared as plain text.
config.environment["NO_COLOR"] = "1"

config.substitutions.append(("%pkc", config.pkc))
config.substitutions.append(("%pk-opt", config.pk_opt))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%samples", os.path.join(config.pk_source_root, "samples")))

# Tests that assemble PTX need ptxas from the CUDA toolkit, found as pkc
# finds it (last in PyPI's nvidia-cuda-nvcc).
def find_ptxas():
    import shutil
    for root in (os.environ.get("PK_CUDA_PATH"), os.environ.get("CUDA_PATH"),
                 os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return True
    if shutil.which("ptxas") is not None:
        return True
    try:
        import nvidia
    except ImportError:
        return False
    return any(os.access(os.path.join(base, d, "bin", "ptxas"), os.X_OK)
               for base in nvidia.__path__ for d in os.listdir(base))


if find_ptxas():
    config.available_features.add("ptxas")
