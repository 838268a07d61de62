"""Closed forms of a GEMM on a systolic array, fold by fold, as SCALE-Sim v3 counts them.

C (M x N) = A (M x K) B (K x N) on R x C PEs. The dataflow maps two GEMM
dimensions onto the array's rows and columns and streams the third in time
(SCALE-Sim's S_R, S_C and T; ``MAPPING``):

- ``os`` (output stationary): rows <- M, columns <- N, time <- K;
- ``ws`` (weight stationary): rows <- K, columns <- N, time <- M;
- ``is`` (input stationary): rows <- K, columns <- M, time <- N.

The array covers S_R x S_C in ceil(S_R/R) ceil(S_C/C) folds, column fold outer
and row fold inner (SCALE-Sim's ``compute/systolic_compute_*.py`` loop order).
Every fold, partial or not, lasts the same number of cycles: T + R + C - 2 for
``os`` (operands skewed in over R + C - 1 cycles while T words stream through,
outputs drained to the bottom edge), T + 2R + C - 2 for ``ws`` and ``is``
(R more cycles to load the stationary operand). SCALE-Sim reports the cycle of
the last output write counted from 0, so a GEMM takes folds x fold cycles - 1
cycles: ceil(M/R) ceil(N/C) (K + R + C - 2) - 1 for ``os``.

Per fold the array reads its input block A[m-range, k-range] and weight block
B[k-range, n-range] from the SRAMs, each word once, and writes its output block
C[m-range, n-range] (``ws`` and ``is`` write their partial sums every K-fold,
as SCALE-Sim does). A range is the fold's slice of the dimension on rows or
columns and the whole of the dimension streamed in time.

DRAM reads follow SCALE-Sim's read buffer in its bandwidth-estimating mode
(``memory/read_buffer_estimate_bw.py``): an SRAM of W words is managed as 100
sets of floor(W/100) words; a word hits when it was fetched since the last
refill, and after E = 50 floor(W/100) words fetched (one half, the active
buffer) the buffer refills and forgets them. Blocks are either the same block
again (same words, same order) or disjoint, so a fold's misses need only how
much of its block the current half holds: nothing, all of it, or the part after
the word at which the last refill fell (``dram_read_words``). DRAM writes are
the output words each fold produces.

Units: cycles of the array's clock, words (one matrix element each).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: GEMM dimension streamed over the array's rows, over its columns, and in time, per dataflow.
MAPPING = {"os": ("m", "n", "k"), "ws": ("k", "n", "m"), "is": ("k", "m", "n")}
#: Of an SRAM's 100 sets, those a refill replaces (SCALE-Sim's active buffer fraction 0.5).
ACTIVE_SETS = 50
#: Sets an SRAM is managed in.
SETS = 100
#: The GEMM dimensions of each operand.
OPERAND_DIMS = {"input": ("m", "k"), "weight": ("k", "n"), "output": ("m", "n")}


def epoch_words(sram_words: int) -> int:
    """Words fetched into an SRAM of ``sram_words`` between two refills: 50 floor(W / 100)."""
    return ACTIVE_SETS * (int(sram_words) // SETS)


@dataclass(frozen=True)
class FoldPlan:
    """The folds of one GEMM on one array: geometry, cycles and per-fold words (arrays in fold order)."""

    dataflow: str
    rows: int
    cols: int
    m: int
    k: int
    n: int

    def __post_init__(self) -> None:
        if self.dataflow not in MAPPING:
            raise ValueError(f"dataflow = {self.dataflow!r}: expected one of {', '.join(MAPPING)}")
        for name in ("rows", "cols", "m", "k", "n"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} = {value!r}: expected an integer >= 1")

    def extent(self, dim: str) -> int:
        """Size of GEMM dimension ``dim`` (m, k or n), elements."""
        return getattr(self, dim)

    @property
    def row_folds(self) -> int:
        """ceil(S_R / R): folds over the dimension on the array's rows."""
        return -(-self.extent(MAPPING[self.dataflow][0]) // self.rows)

    @property
    def col_folds(self) -> int:
        """ceil(S_C / C): folds over the dimension on the array's columns."""
        return -(-self.extent(MAPPING[self.dataflow][1]) // self.cols)

    @property
    def folds(self) -> int:
        """Folds of the GEMM."""
        return self.row_folds * self.col_folds

    @property
    def fold_cycles(self) -> int:
        """Cycles of one fold: T + R + C - 2, plus R to load the stationary operand for ws and is."""
        t = self.extent(MAPPING[self.dataflow][2])
        return t + self.rows + self.cols - 2 + (0 if self.dataflow == "os" else self.rows)

    @property
    def compute_cycles(self) -> int:
        """Cycles of the GEMM: folds x fold cycles - 1 (the last output write's cycle, counted from 0)."""
        return self.folds * self.fold_cycles - 1

    @property
    def macs(self) -> int:
        """Useful multiply-accumulates: M K N."""
        return self.m * self.k * self.n

    def ranges(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per GEMM dimension, the [start, end) element range of every fold, in fold order (int64 arrays)."""
        row_dim, col_dim, _ = MAPPING[self.dataflow]
        fold = np.arange(self.folds, dtype=np.int64)
        index = {row_dim: (fold % self.row_folds, self.rows), col_dim: (fold // self.row_folds, self.cols)}
        out = {}
        for dim in ("m", "k", "n"):
            size = self.extent(dim)
            if dim in index:
                i, step = index[dim]
                out[dim] = (i * step, np.minimum((i + 1) * step, size))
            else:
                out[dim] = (np.zeros(self.folds, dtype=np.int64), np.full(self.folds, size, dtype=np.int64))
        return out

    def words(self, operand: str) -> np.ndarray:
        """Words of ``operand`` (input, weight, output) each fold reads or writes through its SRAM (int64)."""
        r = self.ranges()
        a, b = OPERAND_DIMS[operand]
        return (r[a][1] - r[a][0]) * (r[b][1] - r[b][0])

    def block_keys(self, operand: str) -> np.ndarray:
        """Per fold, an integer naming the block of ``operand`` it touches: equal keys, same words."""
        row_dim, col_dim, _ = MAPPING[self.dataflow]
        fold = np.arange(self.folds, dtype=np.int64)
        dims = OPERAND_DIMS[operand]
        r = fold % self.row_folds if row_dim in dims else 0
        c = fold // self.row_folds if col_dim in dims else 0
        return np.asarray(r * self.col_folds + c, dtype=np.int64) * np.ones(self.folds, dtype=np.int64)


def dram_read_words(keys: np.ndarray, words: np.ndarray, epoch: int) -> np.ndarray:
    """Words each fold fetches from DRAM into an SRAM that forgets after ``epoch`` words fetched.

    ``keys``/``words``: per fold, its block and the block's words. A block's words come in the same
    order at every visit, so what the current half holds of a block is all of it, or the part after
    the word at which the last refill fell: its start is kept per block, and a visit fetches the rest.
    """
    keys = np.asarray(keys, dtype=np.int64)
    words = np.asarray(words, dtype=np.int64)
    out = np.zeros(len(keys), dtype=np.int64)
    if epoch < 1:
        raise ValueError(f"epoch = {epoch}: expected at least one word between refills")
    _, first = np.unique(keys, return_index=True)
    if len(first) == len(keys):  # every block visited once: nothing to hit
        return words.copy()
    if int(words[first].sum()) < epoch:  # every block fits in one half: fetched once, never refilled
        out[first] = words[first]
        return out
    held: dict[int, int] = {}  # block -> position of its first word the current half holds
    fetched_in_half = 0
    for f, (key, size) in enumerate(zip(keys.tolist(), words.tolist())):
        missing = held.get(key, size)  # positions [0, missing) are not in the half
        if missing == 0:
            continue
        if fetched_in_half + missing < epoch:
            fetched_in_half += missing
            held[key] = 0
            out[f] = missing
            continue
        # the refill falls inside this block: after it, every later word of the block is fetched anew
        after = size - (epoch - fetched_in_half)
        fetched = epoch - fetched_in_half + after
        held.clear()
        after %= epoch  # further refills inside the block, each after a full half
        fetched_in_half = after
        if after:
            held[key] = size - after
        out[f] = fetched
    return out


def input_dram_words(plan: FoldPlan, operand: str, sram_words: int) -> np.ndarray:
    """Per fold, the words of ``operand`` (input or weight) read from DRAM (``dram_read_words``)."""
    return dram_read_words(plan.block_keys(operand), plan.words(operand), epoch_words(sram_words))


def first_visits(plan: FoldPlan, operand: str) -> np.ndarray:
    """Per fold, the words of ``operand``'s block if this fold is the first to touch it, else 0."""
    keys = plan.block_keys(operand)
    out = np.zeros(plan.folds, dtype=np.int64)
    _, first = np.unique(keys, return_index=True)
    out[first] = plan.words(operand)[first]
    return out
