"""A kernel's parameter list (cubind/_launch/params.py): parsed from PTX
(every shape, pointer annotations and comments, a clear error for what does
not parse), and the parameter kinds written in params.py only.
"""

from pathlib import Path

import pytest

import cubind
from cubind._launch.params import ANY, BYTES, F32, F64, INT, Param, parse_ptx_entries
from tests.pythonic._core_fixtures import compiled_module, own_cache_dir  # noqa: F401  (fixtures)

# -- PTX parameter lists ---------------------------------------------------------------


def test_ptx_parameters_of_every_shape(module):
    mix = module.entries["mix"]
    assert [(p.kind, p.size) for p in mix] == [(BYTES, 16), (F64, 8), (INT, 1), (INT, 2), (INT, 4), (INT, 8),
                                               (INT, 1), (INT, 1)]
    assert mix[0].text == ".align 8 .b8[16]"


def test_ptx_declarations_with_pointer_annotations_and_comments():
    ptx = """
    .visible .entry k(  // a comment, with a comma
        .param .u64 .ptr .global .align 4 k_param_0,
        .param .s32 k_param_1, /* another */
        .param .align 16 .b8 k_param_2[32],
        .param .f16 k_param_3
    )
    .entry empty()
    """
    got = parse_ptx_entries(ptx.encode() + b"\0")
    assert got["empty"] == []
    k = got["k"]
    assert k[0] == Param(0, INT, 8, False, True, ".u64 .ptr")
    assert (k[1].kind, k[1].size, k[1].signed) == (INT, 4, True)
    assert (k[2].kind, k[2].size, k[2].text) == (BYTES, 32, ".align 16 .b8[32]")
    assert (k[3].kind, k[3].size) == (BYTES, 2)


def test_unparseable_declaration_is_a_clear_error():
    with pytest.raises(ValueError, match="PTX parameter"):
        parse_ptx_entries(".entry k(.param k_param_0)")


# -- the parameter kinds, written once ------------------------------------------------------


def test_the_kinds_are_written_in_params_only():
    # launch.pyx reads them from params.py at import; no other module spells
    # their numbers, and Param answers the question code above asks of them.
    launch = (Path(cubind.__file__).parent / "_launch" / "launch.pyx").read_text()
    assert "K_INT = _params.INT" in launch and "K_INT = 0" not in launch
    assert Param(0, INT, 8).takes_address and Param(0, 4, 8).takes_address
    assert not Param(0, F64, 8).takes_address and not Param(0, BYTES, 8).takes_address
    assert not Param(0, INT, 4).takes_address


def test_a_floats_width_is_decided_by_the_param_alone():
    # The launch path's plan and args.convert both read this: PTX's float
    # types, else the size of a parameter typed by its size only; none else.
    assert [Param(0, F32, 4).float_width, Param(0, F64, 8).float_width] == [4, 8]
    assert [Param(0, ANY, 4).float_width, Param(0, ANY, 8).float_width, Param(0, ANY, 2).float_width] == [4, 8, 0]
    assert [Param(0, INT, 4).float_width, Param(0, INT, 8).float_width, Param(0, BYTES, 8).float_width] == [0, 0, 0]
