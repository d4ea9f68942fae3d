"""CHANGELOG.md is in released versions, and pyproject.toml's version, the one
place the package's version is written, is its newest: every second-level
heading is ``## X.Y.Z (YYYY-MM-DD)``, newest first, none is "Unreleased", and
nothing in the package writes the version again."""

import datetime
import re

from tests._toolkit import ROOT

HEADING = re.compile(r"## (\d+)\.(\d+)\.(\d+) \((\d{4}-\d{2}-\d{2})\)")


def pyproject_version():
    text = (ROOT / "pyproject.toml").read_text()
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    assert project, "pyproject.toml: no [project] table"
    found = re.search(r'^version\s*=\s*"([^"]+)"\s*$', project.group(1), re.M)
    assert found, "pyproject.toml: no version in [project]"
    return found.group(1)


def headings(text):
    """``(line number, heading)`` of every Markdown heading outside code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            yield number, line


def check(text, version):
    """What is wrong with a changelog ``text`` for the package at ``version``."""
    problems = []
    versions = []
    for number, line in headings(text):
        if "unreleased" in line.lower():
            problems.append(f"line {number}: an Unreleased heading: {line!r}")
        if not line.startswith("## "):
            continue
        match = HEADING.fullmatch(line)
        if not match:
            problems.append(f"line {number}: not a version heading '## X.Y.Z (YYYY-MM-DD)': {line!r}")
            continue
        try:
            day = datetime.date.fromisoformat(match.group(4))
        except ValueError:
            problems.append(f"line {number}: not a date: {line!r}")
            continue
        versions.append((number, tuple(int(g) for g in match.group(1, 2, 3)), day))
    if not versions:
        return problems + ["no version heading"]
    newest = ".".join(map(str, versions[0][1]))
    if newest != version:
        problems.append(f"the newest heading is {newest}, pyproject.toml's version is {version}")
    for (_, older, older_day), (number, newer, newer_day) in zip(versions[1:], versions):
        if not older < newer or older_day > newer_day:
            problems.append(f"line {number}: not newest first (below it, {'.'.join(map(str, older))} {older_day})")
    return problems


def test_changelog_is_in_versions_and_its_newest_is_pyprojects():
    assert check((ROOT / "CHANGELOG.md").read_text(), pyproject_version()) == []


def test_the_check_fails_where_it_should():
    good = "# Changelog\n\n## 0.2.0 (2026-11-25)\n\n### A change\n\n## 0.1.0 (2026-11-24)\n"
    assert check(good, "0.2.0") == []
    assert check(good, "0.3.0") == ["the newest heading is 0.2.0, pyproject.toml's version is 0.3.0"]
    assert check("## Unreleased\n" + good, "0.2.0")
    assert check(good.replace("### A change", "### Unreleased: a change"), "0.2.0")
    assert check(good.replace("## 0.1.0 (2026-11-24)", "## Older changes"), "0.2.0")
    assert check(good.replace("2026-11-24", "2026-11-31"), "0.2.0")
    assert check(good.replace("0.1.0", "0.3.0"), "0.2.0")
    assert check("```\n## Unreleased\n```\n" + good, "0.2.0") == []


def test_the_package_writes_no_version_of_its_own():
    # cubind.__version__ reads pyproject.toml (or the installed metadata).
    assigned = [f"{path.relative_to(ROOT)}:{number}"
                for top in ("cubind", "_cubind") for path in sorted((ROOT / top).rglob("*.py"))
                for number, line in enumerate(path.read_text().splitlines(), 1)
                if re.match(r"\s*__version__\s*=\s*[\"']", line)]
    assert assigned == []
    assert not re.search(r"^\s*version\s*=", (ROOT / "setup.py").read_text(), re.M)
    import cubind

    assert cubind.__version__ == pyproject_version()
