"""Compiles every .pk file of a directory for each target given.

Usage: compile_each.py PKC OUTDIR SRCDIR TARGET...
Prints "FAILED: <file> for <target>" with pkc's output for each failure,
then "<ok> of <total> files compiled for <target>" per target. A file
whose every differential case says `cuda-rejects=TEXT` (TPU-only kernels)
is fine when pkc refuses it with those texts instead.
"""
import concurrent.futures
import glob
import os
import shlex
import subprocess
import sys


def expected_rejections(path):
    """The cuda-rejects texts of the file's cases, or None when some case
    must compile."""
    texts = []
    with open(path) as f:
        for line in f:
            if not line.startswith("# DIFF:"):
                continue
            found = [t.split("=", 1)[1] for t in shlex.split(line[len("# DIFF:"):])
                     if t.startswith("cuda-rejects=")]
            if not found:
                return None
            texts += found
    return texts or None


def main():
    pkc, out, source, targets = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    files = sorted(glob.glob(os.path.join(source, "*.pk")))
    jobs = [(f, t) for t in targets for f in files]

    def compile_one(job):
        path, target = job
        directory = os.path.join(out, target.replace(":", "_"))
        os.makedirs(directory, exist_ok=True)
        run = subprocess.run([pkc, "compile", path, f"--target={target}", "-o", directory],
                             capture_output=True, text=True)
        return job, run

    ok = {t: 0 for t in targets}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for (path, target), run in pool.map(compile_one, jobs):
            rejects = expected_rejections(path) if target.startswith("cuda") else None
            if rejects is not None:
                if run.returncode == 1 and any(t in run.stderr for t in rejects):
                    ok[target] += 1
                else:
                    print(f"FAILED: {os.path.basename(path)} for {target}: expected pkc to "
                          f"refuse it with one of {rejects}\n{run.stderr}")
            elif run.returncode == 0:
                ok[target] += 1
            else:
                print(f"FAILED: {os.path.basename(path)} for {target}\n{run.stderr}")
    for t in targets:
        print(f"{ok[t]} of {len(files)} files compiled for {t}")


if __name__ == "__main__":
    main()
