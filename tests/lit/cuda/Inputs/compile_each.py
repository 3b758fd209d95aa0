"""Compiles every .pk file of a directory for each target given.

Usage: compile_each.py PKC OUTDIR SRCDIR TARGET...
Prints "FAILED: <file> for <target>" with pkc's output for each failure,
then "<ok> of <total> files compiled for <target>" per target.
"""
import concurrent.futures
import glob
import os
import subprocess
import sys


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
            if run.returncode == 0:
                ok[target] += 1
            else:
                print(f"FAILED: {os.path.basename(path)} for {target}\n{run.stderr}")
    for t in targets:
        print(f"{ok[t]} of {len(files)} files compiled for {t}")


if __name__ == "__main__":
    main()
