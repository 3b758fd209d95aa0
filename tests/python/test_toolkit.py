"""pkc with the ptxas and libdevice of PyPI's nvidia-cuda-nvcc and nvidia-nvvm.

On a machine without the CUDA toolkit, scripts/setup.sh installs those
packages and pkc finds them through Python (tests/unit/ToolkitTest.cpp
checks the search). Here pkc compiles with them alone: PK_CUDA_PATH names
the packages' directory and no other toolkit is named or on PATH. The
cubins must load in the runtime, and run (on the fake driver) to the
right results.
"""

import os
import subprocess
import tempfile
import unittest

import numpy as np

import fakecuda
from fakecuda import FakeArray, FakeFramework

import pkc

SAMPLES = os.environ["PK_SAMPLES"]


def pip_toolkit():
    """The directory PyPI's CUDA packages put bin/ptxas and nvvm/libdevice in."""
    try:
        import nvidia
    except ImportError:
        return None
    for base in nvidia.__path__:
        for sub in sorted(os.listdir(base)):
            root = os.path.join(base, sub)
            if (os.access(os.path.join(root, "bin", "ptxas"), os.X_OK) and
                    os.path.isfile(os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc"))):
                return root
    return None


ROOT = pip_toolkit()
if ROOT is None:
    print("SKIPPED: PyPI's nvidia-cuda-nvcc and nvidia-nvvm are not installed")
    raise SystemExit(77)


class PipToolkit(unittest.TestCase):
    def compile(self, sample, targets, out):
        env = {k: v for k, v in os.environ.items() if k not in ("CUDA_PATH", "CUDA_HOME")}
        env["PK_CUDA_PATH"] = ROOT
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                      if "cuda" not in p)
        cmd = [pkc.find_pkc(), "compile", os.path.join(SAMPLES, sample), "-o", out]
        cmd += [f"--target={t}" for t in targets]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_cubins_load_and_run(self):
        pkc.register_framework(FakeArray, FakeFramework())
        with tempfile.TemporaryDirectory() as out:
            self.compile("add.pk", ["cuda:sm_90a", "cuda:sm_80"], out)
            m = pkc.load(os.path.join(out, "add.json"), no_device=True, compute_capability=86)
            self.assertEqual(m.target, "cuda:sm_80")
            m = pkc.load(os.path.join(out, "add.json"))
            self.assertEqual(m.target, "cuda:sm_90a")
            x = np.arange(3000, dtype=np.float32)
            fakecuda.reset()
            np.testing.assert_array_equal(m.add(FakeArray.of(x), FakeArray.of(x)).numpy(), 2 * x)

    def test_libdevice(self):
        # softmax calls expf: libdevice's __nv_expf, from nvidia-nvvm.
        with tempfile.TemporaryDirectory() as out:
            self.compile("softmax.pk", ["cuda:sm_90a"], out)
            m = pkc.load(os.path.join(out, "softmax.json"), no_device=True,
                         compute_capability=90)
            self.assertEqual(m.exports, ["softmax"])


if __name__ == "__main__":
    unittest.main()
