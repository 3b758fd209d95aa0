"""The sample kernels the GPU tests launch.

Where pkc is, they are compiled from samples/ with pkc.compile (its cache
is exercised on the way). A GPU machine has no compiler: a runtime-only
build names the artifacts scripts/gpu-check.sh prepared where pkc is
(PK_SAMPLE_KERNELS, one manifest per sample, for sm_90a and sm_80), and
the tests load those.
"""

import os

import pkc


def sample_module(stem):
    """samples/STEM.pk, compiled for this GPU or loaded as prepared."""
    try:
        pkc.find_pkc()
    except pkc.CompileError:
        return pkc.load(os.path.join(os.environ["PK_SAMPLE_KERNELS"], stem + ".json"))
    return pkc.compile(os.path.join(os.environ["PK_SAMPLES"], stem + ".pk"))
