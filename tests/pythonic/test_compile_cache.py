"""The compile cache (cubind/_compile/cache.py): a second compile is a hit,
every input and the NVRTC and driver versions are part of the key, the opt
out, the default location, damaged entries, an unwritable cache, and
processes sharing one cache. Each test compiles into its own empty cache.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubind
import cubind._compile.cache as _cache
import cubind._compile.program as _program
from tests._toolkit import pythonpath
from tests.pythonic._core_fixtures import ROOT, SRC, own_cache_dir  # noqa: F401  (fixtures)


def entries(tmp_dir):
    return sorted(p for p in Path(tmp_dir).rglob("*.bin"))


# -- the compile cache -----------------------------------------------------------


def test_second_compile_is_a_cache_hit(cache_dir):
    first = cubind.Program(SRC, name_expressions=["fill<float>"]).compile("cubin", arch=75)
    second = cubind.Program(SRC, name_expressions=["fill<float>"]).compile("cubin", arch=75)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert (second.code, second.ptx, second.lowered_names) == (first.code, first.ptx, first.lowered_names)
    assert len(entries(cache_dir)) == 1


@pytest.mark.parametrize("change", [
    dict(source=SRC + "\n// changed"), dict(options=["-DX=1"]), dict(name_expressions=["fill<int>"]),
    dict(headers={"h.h": "#define Y 2"}), dict(target="cubin"), dict(arch=80), dict(name="other.cu"),
])
def test_each_input_is_part_of_the_key(cache_dir, change):
    base = dict(source=SRC, options=[], name_expressions=["fill<float>"], headers={"h.h": "#define Y 1"},
                target="ptx", arch=75, name="program.cu")

    def compile_(**kw):
        kw = dict(base, **kw)
        return cubind.Program(kw["source"], kw["options"], kw["name_expressions"], kw["headers"],
                              kw["name"]).compile(kw["target"], kw["arch"])

    assert not compile_().from_cache
    assert not compile_(**change).from_cache
    assert compile_(**change).from_cache and compile_().from_cache
    assert len(entries(cache_dir)) == 2


def test_nvrtc_and_driver_versions_are_part_of_the_key(monkeypatch):
    compile_ = lambda: cubind.Program(SRC).compile(arch=75)  # noqa: E731
    assert not compile_().from_cache and compile_().from_cache
    monkeypatch.setattr(_program, "_nvrtc_version", lambda: [99, 9])
    assert not compile_().from_cache
    monkeypatch.setattr(_program, "_driver_version", lambda: 99999)
    assert not compile_().from_cache and compile_().from_cache


def test_opt_out_writes_and_reads_nothing(cache_dir, monkeypatch):
    cubind.Program(SRC).compile(arch=75)
    monkeypatch.setenv("CUBIND_NO_COMPILE_CACHE", "1")
    assert not cubind.Program(SRC).compile(arch=75).from_cache
    assert not cubind.Program(SRC + " ").compile(arch=75).from_cache
    assert len(entries(cache_dir)) == 1


def test_default_location_is_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("CUBIND_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_dir() == str(tmp_path / "xdg" / "cubind")
    cubind.Program(SRC).compile(arch=75)
    assert len(entries(tmp_path / "xdg" / "cubind")) == 1
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _cache.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "cubind")


def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache_dir):
    good = cubind.Program(SRC).compile(arch=75)
    (path,) = entries(cache_dir)
    data = path.read_bytes()
    for damaged in (data[:-10], b"garbage", data[:40], data + b"extra"):
        path.write_bytes(damaged)
        again = cubind.Program(SRC).compile(arch=75)
        assert not again.from_cache and again.code == good.code
        assert path.read_bytes() == data


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CUBIND_CACHE_DIR", str(blocker / "cache"))
    assert not cubind.Program(SRC).compile(arch=75).from_cache


def test_concurrent_processes_share_the_cache_safely(cache_dir):
    code = textwrap.dedent("""
        import hashlib, sys, cubind
        src = sys.stdin.read()
        outs = [cubind.Program(src).compile("cubin", arch=75) for _ in range(3)]
        print(hashlib.sha256(outs[-1].code).hexdigest(), outs[-1].from_cache)
    """)
    env = dict(os.environ, PYTHONPATH=pythonpath(ROOT), CUBIND_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, text=True) for _ in range(4)]
    results = [p.communicate(SRC) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1] for r in results]
    digests = {r[0].split()[0] for r in results}
    assert len(digests) == 1 and all(r[0].split()[1] == "True" for r in results)
    assert len(entries(cache_dir)) == 1
    assert not [p for p in Path(cache_dir).rglob(".tmp-*")]


def test_the_cache_key_has_the_real_nvrtc_version():
    import nvrtc

    assert _program._nvrtc_version() == list(nvrtc.nvrtcVersion()[1:]) and _program._nvrtc_version()[0] >= 12
