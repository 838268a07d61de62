"""The data-movement model of a matrix chain (004 app. D), evaluated on its own: ``offsim models chain``.

For the chain A_1 ... A_n (A_i is P[i-1] x P[i]) and a fast memory of M elements it reports the
minimum-op-count order (004 Algorithm 10), the off-chip traffic when every product is written
off chip (S, 004 eq. D.18), and the optimum with Two-MM fusion over the same tree (F(1, n) + P0 Pn,
004 eqs. D.19-D.26), with the kernels that optimum runs and their tiles. The defaults are 004's
worked example (004 section D.7: P = 936, 1008, 552, 368, 1016, 616, 544 and sqrt(M) = 256),
whose 10,190,344 and 8,392,058 words it reproduces. Volumes are in elements (words) and, with the
element size, bytes.
"""

from __future__ import annotations

from models.data_movement import compulsory_words, fused_data_movement, min_op_count, unfused_data_movement
from simulator.errors import InputError
from simulator.studies.model_eval import Outputs
from simulator.units import ascii_integer, format_bytes, format_quantity

#: 004's worked example (004 section D.7, 004:L5302): the chain's dimensions and M = 256^2 elements
EXAMPLE_DIMS = (936, 1008, 552, 368, 1016, 616, 544)
EXAMPLE_M_ELEMS = 256 * 256
CHAIN_COLUMNS = ("dims", "m_elems", "elem_bytes", "op_count", "tree", "unfused_words", "fused_words",
                 "unfused_bytes", "fused_bytes", "saving")
#: Most matrices of one chain: the order search and the fusion plan grow faster than n^3 (measured: 200
#: matrices 1 s, 400 about 10 s, 800 over two minutes), and 004's chains have a handful.
MAX_CHAIN_MATRICES = 256
KERNEL_NAMES = {"none": "unfused", "left": "fused left (A_i A_k) A_j", "right": "fused right A_i (A_k A_j)"}


def parse_dims(text: str | None) -> tuple[int, ...]:
    """``--dims`` "936,1008,552" as at least three positive integers (a chain of two or more matrices)."""
    if text is None:
        return EXAMPLE_DIMS
    try:
        dims = tuple(ascii_integer(part) for part in text.split(","))
    except ValueError:
        dims = ()
    if len(dims) < 3 or min(dims) < 1:
        raise InputError(f"--dims {text!r}: expected three or more positive integers separated by commas, the "
                         "P_0, ..., P_n of a chain of n >= 2 matrices (A_i is P_{i-1} x P_i), e.g. 100,200,50")
    if len(dims) - 1 > MAX_CHAIN_MATRICES:
        raise InputError(f"--dims: {len(dims) - 1} matrices; expected at most {MAX_CHAIN_MATRICES} "
                         "(simulator.studies.chain_eval.MAX_CHAIN_MATRICES: the model's search grows faster than n^3)")
    return dims


def run_chain(dims_text: str | None, m_elems: int | None, elem_bytes: int, outputs: Outputs = Outputs()) -> list[str]:
    """``offsim models chain``: the report (text lines), then the CSV of ``outputs``."""
    outputs.check(listing=False, draws=False)
    dims = parse_dims(dims_text)
    m = EXAMPLE_M_ELEMS if m_elems is None else m_elems
    for option, value in (("--m-elems", m), ("--elem-bytes", elem_bytes)):
        if value < 1:
            raise InputError(f"{option} {value}: expected an integer >= 1")
    order = min_op_count(dims)
    try:
        unfused = unfused_data_movement(order, m)
        plan = fused_data_movement(order, m)
    except ValueError as exc:  # e.g. a fast memory too small for the blocking's tiles
        raise InputError(f"models chain: {exc}") from None
    compulsory = compulsory_words(dims)
    if min(unfused, plan.total_words) < compulsory:
        raise InputError(f"--dims {','.join(map(str, dims))} with --m-elems {m}: the model's volumes ({unfused:,} "
                         f"and {plan.total_words:,} words) fall below the {compulsory:,} words that reading the "
                         f"inputs and writing the result take once: tiles of sqrt(M) = {m ** 0.5:.0f} elements "
                         "exceed these matrices, outside the blocking model's range (004 app. D); expected "
                         "matrices larger than the fast memory's tiles, or a smaller --m-elems")
    saving = 1 - plan.total_words / unfused if unfused else 0.0
    lines = [f"matrix chain P = {', '.join(map(str, dims))} ({order.n} matrices), fast memory M = {m} elements "
             f"({format_bytes(m * elem_bytes)} of {elem_bytes} B elements)",
             f"  minimum-op-count order (004 Algorithm 10): {order.tree()}, {order.op_count:,} multiply-adds",
             f"  every product written off chip (004 eq. D.18): {unfused:,} words ({format_quantity(unfused * elem_bytes, 'B')})",
             f"  with Two-MM fusion (004 eqs. D.19-D.26): {plan.total_words:,} words "
             f"({format_quantity(plan.total_words * elem_bytes, 'B')}), {saving:.1%} less",
             "  kernels of the fused optimum, root first (nodes A_i..A_j):"]
    for (i, j), choice in plan.kernels():
        node = plan.nodes[(i, j)]
        lines.append(f"    A{i}..A{j}: {KERNEL_NAMES[choice]}, tile {node.tile_x:.0f} x {node.tile_y:.0f}, "
                     f"{node.f_best:,} words in its subtree")
    row = {"dims": " ".join(map(str, dims)), "m_elems": m, "elem_bytes": elem_bytes, "op_count": order.op_count,
           "tree": order.tree(), "unfused_words": unfused, "fused_words": plan.total_words,
           "unfused_bytes": unfused * elem_bytes, "fused_bytes": plan.total_words * elem_bytes, "saving": saving}
    return lines + outputs.write(CHAIN_COLUMNS, [row])

