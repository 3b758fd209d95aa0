#!/usr/bin/env python3
"""Lists calls whose arguments build IR in an order the compiler chooses.

C++ leaves the order in which a call's arguments are evaluated to the
compiler (GCC usually right to left, Clang left to right), so
`op(f(), g())` where both `f` and `g` create ops emits them in different
orders from a GCC-built and a Clang-built pkc (CONTRIBUTING.md, Style).
This finds candidates: calls with two or more arguments that each call a
builder (`::create(`, `createOrFold<`) or a function of pkc's that returns
a Value, Obj or ArrayPtr (collected from src/), other than constants.
It is a heuristic (a helper that only reads IR is reported too; a call
that orders two constants is not); scripts/compare-builds.sh compares a
GCC-built and a Clang-built pkc's output to see what really differs.

usage: scripts/find-unordered-ir.py [FILE...]   (default: src/**/*.cpp)
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_BUILDERS = {"get", "at", "lookup", "value", "result", "getResult", "first", "second",
                "front", "back", "find", "typeOf", "repr", "fail", "operator"}
CONSTANT = re.compile(r"^\s*(\w+(\.|->))?(index|constant|integer|i32|i64Constant|real|intConst|makeInt|"
                      r"makeFloat)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$")


def builder_names():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "src/**/*.[ch]*"), recursive=True):
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"\b(?:mlir::)?(?:Value|Obj|ArrayPtr|OpResult)\s+(?:\w+::)*(\w+)\s*\(", text):
            names.add(m.group(1))
        # Local lambdas that build (`auto cmp = [&](...) { ... create ... }`).
        for m in re.finditer(r"\bauto\s+(\w+)\s*=\s*\[[^\]]*\]\s*\(", text):
            names.add(m.group(1))
    return sorted(n for n in names - NOT_BUILDERS if len(n) > 2)


def arguments(text, open_paren):
    """The argument spans of the call whose '(' is at open_paren."""
    depth, start, spans, i = 0, open_paren + 1, [], open_paren
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                spans.append((start, i))
                return spans
        elif c == "," and depth == 1:
            spans.append((start, i))
            start = i + 1
        elif c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        i += 1
    return spans


def main(paths):
    builds = re.compile(r"(::create\s*\(|createOrFold\s*<|\b(?:" + "|".join(builder_names()) + r")\s*\()")
    found = 0
    for path in paths:
        text = re.sub(r"//[^\n]*", lambda m: " " * len(m.group()), open(path, encoding="utf-8").read())
        for m in re.finditer(r"\(", text):
            if re.search(r"\b(if|for|while|switch|return)\s*$", text[max(0, m.start() - 12):m.start()]):
                continue
            building = [s for s in arguments(text, m.start())
                        if builds.search(text[s[0]:s[1]]) and not CONSTANT.match(text[s[0]:s[1]])]
            if len(building) >= 2:
                line = text.count("\n", 0, m.start()) + 1
                call = " ".join(text[max(0, m.start() - 40):m.start() + 60].split())
                print(f"{os.path.relpath(path, ROOT)}:{line}: {call}")
                found += 1
    print(f"{found} candidate calls", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "src/**/*.cpp"), recursive=True)))
