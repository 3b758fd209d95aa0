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


# SASS checks need cuobjdump (and nvdisasm beside it): the toolkit's, or
# PyPI's nvidia-cuda-cuobjdump that scripts/setup.sh installs.
def find_cuobjdump():
    import shutil
    candidates = [os.path.join(root, "bin") for root in (
        os.environ.get("PK_CUDA_PATH"), os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"),
        "/usr/local/cuda") if root]
    # PyPI's packages live in the project's Python, which need not be
    # the one running lit.
    import subprocess
    query = ("import nvidia, os; print('\\n'.join(os.path.join(b, d, 'bin') "
             "for b in nvidia.__path__ for d in os.listdir(b)))")
    try:
        found = subprocess.run([config.python, "-c", query], capture_output=True, text=True)
        candidates += found.stdout.split()
    except OSError:
        pass
    for directory in candidates:
        tool = os.path.join(directory, "cuobjdump")
        if os.access(tool, os.X_OK) and os.access(os.path.join(directory, "nvdisasm"), os.X_OK):
            return tool
    return shutil.which("cuobjdump")


cuobjdump = find_cuobjdump()
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
