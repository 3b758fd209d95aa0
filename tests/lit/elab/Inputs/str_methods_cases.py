"""Writes a .pk file of random str method calls, each printed with repr.

Run as a program by CPython, the file prints what Python computes; checked
by pkc, its print notes must say the same (str-methods-vs-cpython.test).
Fixed seed: the same cases every run.
"""
import random
import sys

ALPHABET = "ab ,\t\nxX1_-'\"\\\r"


def cases(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        s = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
        sub = "".join(rng.choice("ab ,x\n") for _ in range(rng.randint(1, 2)))
        m, a, b = rng.randint(-1, 3), rng.randint(-6, 8), rng.randint(-6, 8)
        calls = [
            "", f".split(None, {m})", f".rsplit(None, {m})", f".split({sub!r}, {m})",
            f".rsplit({sub!r}, {m})", f".find({sub!r}, {a})", f".rfind({sub!r}, {a}, {b})",
            f".count({sub!r}, {a}, {b})", f".startswith(({sub!r}, 'a'), {a})",
            f".endswith({sub!r}, {a}, {b})", f".replace({sub!r}, '-', {m})",
            f".strip({sub!r})", ".lstrip()", ".rstrip()", f".partition({sub!r})",
            f".rpartition({sub!r})", ".splitlines()", ".splitlines(True)", ".title()",
            ".capitalize()", ".swapcase()", f".zfill({rng.randint(0, 14)})",
            f".center({rng.randint(0, 14)}, '*')", f".ljust({rng.randint(0, 14)}, '.')",
            f".rjust({rng.randint(0, 14)})", f".removeprefix({sub!r})",
            f".removesuffix({sub!r})", ".isdigit()", ".isalnum()", ".isupper()", ".islower()",
            ".isspace()",
        ]
        yield "print(repr((" + ", ".join(f"{s!r}{c}" for c in calls) + ")))"


if __name__ == "__main__":
    with open(sys.argv[1], "w") as out:
        out.write("\n".join(cases(400, 11)) + "\n")
