"""_cubind.exports.reexport, which every generated package's __init__.py calls:
the Python layer's names, its enums made on first look-up, and the modules
the spec's ``[package] submodules`` name, imported on first look-up."""

import sys
import types

import pytest

from _cubind.exports import reexport


@pytest.fixture
def package(monkeypatch):
    """A package `fakepkg` with a Python layer of one ready name and one lazy enum."""
    layer = types.ModuleType("fakepkg._layer")
    layer.__all__ = ["ready", "Lazy"]
    layer._LAZY = {"Lazy"}
    layer.ready = object()
    made = []

    def __getattr__(name):
        made.append(name)
        return type(name, (), {})

    layer.__getattr__ = __getattr__
    pkg = types.ModuleType("fakepkg")
    inner = types.ModuleType("fakepkg.inner")
    for module in (pkg, inner):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.delitem(sys.modules, "fakepkg.me", raising=False)
    monkeypatch.delitem(sys.modules, "fakepkg.js", raising=False)
    pkg.__getattr__, pkg.__dir__ = reexport(vars(pkg), layer,
                                            submodules={"me": "fakepkg", "inner": "fakepkg.inner", "js": "json"})
    return pkg, made


def test_names_are_copied_and_enums_made_on_first_look_up(package):
    pkg, made = package
    assert "ready" in vars(pkg) and "Lazy" not in vars(pkg) and not made
    assert pkg.Lazy is pkg.Lazy and made == ["Lazy"]
    assert "Lazy" in dir(pkg)
    with pytest.raises(AttributeError, match="'fakepkg' has no attribute 'nothing'"):
        _ = pkg.nothing


def test_submodules_are_imported_on_first_look_up(package):
    pkg, _ = package
    import json

    assert pkg.me is pkg and pkg.inner is sys.modules["fakepkg.inner"] and pkg.js is json
    # A module outside the package is registered under it (`import cuda.nvrtc`
    # after `cuda.nvrtc`); the package itself and its own modules are not.
    assert sys.modules["fakepkg.js"] is json
    assert "fakepkg.me" not in sys.modules
