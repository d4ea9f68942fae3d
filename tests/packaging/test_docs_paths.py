"""The docs name no file the repository lacks.

Every repository path a doc gives in backticks or as a link target is looked
up among the files a clone has: ``tests/test_x.py::test_y`` is the file,
``_cubind/convert`` a compiled module's name (any file of that stem), ``NAME``
in ``scripts/toolkits/NAME.txt`` a placeholder (any name). Fenced code blocks
are read word by word (a command names files too; a bracket there is code).
"""

import fnmatch
import functools
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs/pythonic.md",
        "docs/pythonic_array.md", "docs/API.md", "docs/bindings.md", "bench/README.md", "bench/HISTORY.md",
        "docs/compute.md", "docs/graph.md", "docs/troubleshooting.md", "docs/system.md", "docs/building.md",
        "generator/README.md"]
PREFIXES = ("tests/", "_cubind/", "cubind/", "examples/", "scripts/", "bench/", "docs/", "generator/",
            "bindings/", "seeds/")
# docs/API.md must stay word for word the project's external contract; its
# seeds/004_*.txt names the founding documents, kept outside the repository.
OUTSIDE = ("seeds/",)
# README lines the lead engineer is rewriting (their set-up section): listed
# here as "README.md:LINE" until fixed there, then this list is emptied.
KNOWN_MISSING: set = set()
# Words standing for a name the reader picks: scripts/toolkits/NAME.txt (a
# toolkit), bindings/X.toml (the library being bound).
PLACEHOLDER = re.compile(r"\b(?:NAME|X)\b")
# What the documented build makes, which the repository rightly lacks.
BUILT = ("generator/build",)  # generator/README.md: cmake -S generator -B generator/build
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def references(doc):
    """``(line number, path)`` of every repository path ``doc`` names."""
    fenced = False
    for number, line in enumerate((ROOT / doc).read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:  # commands and code: their words, not their brackets
            for word in re.split(r"[\s'\"(),=]+", line):
                if word.startswith(PREFIXES):
                    yield number, word.split("::")[0].rstrip(".,:;")
            continue
        for match in _LINK.finditer(line):
            target = match.group(1).split("#")[0]
            if target and "://" not in target and not target.startswith("mailto:"):
                yield number, os.path.normpath(os.path.join(os.path.dirname(doc), target))
        for match in _CODE.finditer(line):
            for word in match.group(1).split():
                word = word.split("::")[0].rstrip(".,:;)")
                if word.startswith(PREFIXES):
                    yield number, word


@functools.cache
def repository_files():
    """The files a clone has: git's tracked and not-ignored files (a built
    module or build directory present here is not in the repository), or
    every file where this is no git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, text=True, check=True, timeout=60).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        listed = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()]
    return frozenset(f for f in listed if f)


def exists(path):
    """Whether ``path`` (a file, a directory, a module's stem or a glob) is in the repository."""
    pattern = PLACEHOLDER.sub("*", path).rstrip("/")
    files = repository_files()
    if any(ch in pattern for ch in "*?["):
        return any(fnmatch.fnmatchcase(f, pattern) or fnmatch.fnmatchcase(f, pattern + "/*") for f in files)
    return pattern in files or any(f.startswith((pattern + "/", pattern + ".")) for f in files)


def missing(doc):
    return [f"{doc}:{number}: {path}" for number, path in references(doc)
            if not path.startswith(OUTSIDE + BUILT) and not exists(path)]


@pytest.mark.parametrize("doc", DOCS)
def test_docs_name_only_files_the_repository_has(doc):
    found = missing(doc)
    unexpected = [m for m in found if m.split(": ")[0] not in KNOWN_MISSING]
    assert not unexpected, "\n".join(unexpected)
    stale = [k for k in KNOWN_MISSING if k.startswith(doc + ":") and k not in {m.split(": ")[0] for m in found}]
    assert not stale, f"fixed, remove from KNOWN_MISSING: {stale}"


def test_the_scan_finds_references_and_misses():
    # The check means something only if it reads the paths the docs give.
    found = {path for doc in DOCS for _, path in references(doc)}
    assert {"docs/pythonic_array.md", "examples/pythonic_saxpy.py", "seeds/004_*.txt"} <= found
    assert not exists("examples/no_such_example.py") and exists("scripts/toolkits/NAME.txt")
    assert exists("_cubind/convert") and exists("tests/bindings/test_loader.py")
