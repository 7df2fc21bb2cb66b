#!/usr/bin/env python3
"""Checks README.md and docs/*.md (docs/testing.md, "Shell blocks in these pages").

Fails, naming the file and line, on
- a relative link to a file that does not exist, or to an anchor that no heading of the target
  makes (GitHub's slugs: lowercase, punctuation other than hyphens dropped, spaces to hyphens, a
  repeated slug gets -1, -2, ...);
- a fenced shell block (sh, bash, shell, console) without, on the line just before its fence,
  `<!-- run by: TEST -->` naming a test some CMakeLists.txt registers, or `<!-- not run: REASON -->`.

usage: check-docs.py [--root DIR]    (default: the repository this script is in)
"""
import argparse
import os
import re
import sys
from pathlib import Path

SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+).*?\1")
RUN_BY = re.compile(r"^\s*<!--\s*run by:\s*(\S+)\s*-->\s*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(\S.*?)\s*-->\s*$")


def pages(root):
    found = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    return [p for p in found if p.is_file()]


def outside_fences(lines):
    """Yields (line number, line, fence language or None) for the lines outside fenced blocks; a
    fence's opening line is yielded with its language."""
    fence = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            yield number, line, match.group(2).lower()
        elif fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
        else:
            yield number, line, None


def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        for _, line, fence in outside_fences(path.read_text(encoding="utf-8").splitlines()):
            match = HEADING.match(line) if fence is None else None
            if not match:
                continue
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            seen.setdefault(f"{base}-{count}" if count else base, 0)
        cache[path] = set(seen)
    return cache[path]


def cmake_commands(text):
    """Yields (command, arguments) for each command of a CMake file; a quoted argument is one
    argument, comments are skipped, and a nested (...) stays inside its command's arguments."""
    token = re.compile(r'#\[\[.*?\]\]|#[^\n]*|"(?:\\.|[^"\\])*"|[()]|[^\s()#"]+', re.S)
    name, args, depth, previous = None, [], 0, None
    for match in token.finditer(text):
        word = match.group(0)
        if word.startswith("#"):
            continue
        if name is None:
            if word == "(" and previous and re.fullmatch(r"\w+", previous):
                name, args, depth = previous.lower(), [], 1
            previous = word
            continue
        if word == "(":
            depth += 1
        elif word == ")":
            depth -= 1
            if depth == 0:
                yield name, args
                name, previous = None, None
                continue
        if word not in "()":
            args.append(word[1:-1] if word.startswith('"') else word)


def registered_tests(root):
    """The names of ctest tests that the CMake files under root register: add_test(NAME x), and
    calls of the functions that register one (bsw_cc_test(NAME x), bsw_node_test(x ...)), with
    foreach loops over literal lists expanded. Build trees (build*/) are left out."""
    sources = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if not d.startswith(("build", "."))]
        sources += [Path(directory) / f for f in files if f == "CMakeLists.txt" or f.endswith(".cmake")]
    commands = [c for path in sorted(sources) for c in cmake_commands(path.read_text(encoding="utf-8"))]
    wrappers = {"add_test": "NAME", "gtest_discover_tests": 0}  # the argument that names the test
    for _ in range(3):  # a wrapper may call another wrapper
        function = None
        for name, args in commands:
            if name == "function":
                function = args
            elif name == "endfunction":
                function = None
            elif function and name in wrappers and function[0].lower() not in wrappers:
                test = test_name(args, wrappers[name]) or ""
                if test == "${ARG_NAME}":
                    wrappers[function[0].lower()] = "NAME"
                elif test[2:-1] in function[1:]:
                    wrappers[function[0].lower()] = function[1:].index(test[2:-1])
    names, loops, function = set(), [], None
    for name, args in commands:
        if name == "function":
            function = args
        elif name == "endfunction":
            function = None
        elif name == "foreach":
            literal = args[1:2] not in (["IN"], ["RANGE"])
            loops.append((args[0], args[1:] if literal else []))
        elif name == "endforeach" and loops:
            loops.pop()
        elif name in wrappers and not function:
            expanded = [test_name(args, wrappers[name]) or "${}"]
            for variable, values in loops:
                reference = "${" + variable + "}"
                if any(reference in t for t in expanded):
                    expanded = [t.replace(reference, v) for t in expanded for v in values]
            names.update(t for t in expanded if "${" not in t)
    return names


def test_name(args, where):
    if where == "NAME":
        return args[args.index("NAME") + 1] if "NAME" in args[:-1] else None
    return args[where] if where < len(args) else None


def check(root):
    problems = []
    tests = None
    for page in pages(root):
        lines = page.read_text(encoding="utf-8").splitlines()
        where = page.relative_to(root)
        for number, line, fence in outside_fences(lines):
            if fence is not None:
                if fence in SHELL_LANGUAGES:
                    before = lines[number - 2] if number > 1 else ""
                    run_by, not_run = RUN_BY.match(before), NOT_RUN.match(before)
                    if run_by:
                        tests = registered_tests(root) if tests is None else tests
                        if run_by.group(1) not in tests:
                            problems.append(f"{where}:{number}: the {fence} block is marked run by "
                                            f"{run_by.group(1)}, which no CMakeLists.txt registers")
                    elif not not_run:
                        problems.append(f"{where}:{number}: the {fence} block is marked neither "
                                        "<!-- run by: TEST --> nor <!-- not run: REASON --> on "
                                        "the line before it")
                continue
            for match in LINK.finditer(INLINE_CODE.sub("", line)):
                problem = check_link(root, page, match.group(1))
                if problem:
                    problems.append(f"{where}:{number}: {problem}")
    return problems


def check_link(root, page, target):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return None  # http:, mailto: and the like
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    if not file.exists():
        return f"link to {target}: {path} does not exist"
    if not anchor:
        return None
    if file.suffix != ".md":
        return f"link to {target}: an anchor into {path}, which is not Markdown"
    if anchor not in anchors(file):
        return f"link to {target}: no heading of {file.relative_to(root)} makes #{anchor}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    root = parser.parse_args().root.resolve()
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"FAIL: {len(problems)} problem(s) in README.md and docs/ (docs/testing.md)")
        return 1
    print(f"ok: links, anchors and shell blocks of {len(pages(root))} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
