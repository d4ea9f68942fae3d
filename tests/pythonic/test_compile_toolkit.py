"""The toolkit's headers a compile includes (cubind/_compile/toolkit.py):
found unless turned off, and only those of NVRTC's major version.
"""

import pytest

import cubind
import cubind._compile.toolkit as _toolkit
from tests.pythonic._core_fixtures import own_cache_dir  # noqa: F401  (fixtures)


def test_the_toolkits_headers_are_found_unless_turned_off():
    source = ("#include <cooperative_groups.h>\n#include <cuda_fp16.h>\n"
              'extern "C" __global__ void half_one(__half *x) { *x = __float2half(1.0f); }')
    assert b".entry half_one" in cubind.Program(source).compile("ptx", arch=90).code
    with pytest.raises(cubind.CompileError, match="cooperative_groups.h") as caught:
        cubind.Program(source, include_toolkit=False).compile("ptx", arch=90)
    assert not [o for o in caught.value.options if o.startswith("-I")]


def test_the_toolkit_headers_match_nvrtcs_major(tmp_path, monkeypatch):

    other = tmp_path / "include"  # a toolkit of another major, named by CUDA_HOME
    other.mkdir(parents=True)
    (other / "cooperative_groups.h").write_text("")
    (other / "cuda.h").write_text("#define CUDA_VERSION 99000\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    _toolkit.toolkit_include_options.cache_clear()
    try:
        assert f"-I{other}" not in _toolkit.toolkit_include_options(13)
        assert _toolkit.toolkit_include_options(99)[0] == f"-I{other}"
    finally:
        _toolkit.toolkit_include_options.cache_clear()
