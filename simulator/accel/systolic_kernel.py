"""Compiled lines of a systolic GEMM's steps: what each step reads, writes and writes in part.

``simulator.accel.systolic.gemm_steps`` cuts a GEMM's folds into steps; for every step it needs the lines the
step's folds move of each operand's blocks, made distinct and sorted across the operands, and the output lines
it writes only in part. A GEMM of the FMM study runs thousands of steps; ``steps_lines`` makes every step's
lines in one call (``tests/component/test_systolic.py`` checks them against a plain numpy reading of these
rules).

An operand's blocks (``systolic._BlockLines``): ``block[f]``, the block fold f works on; block b's lines
``lines[offsets[b]:offsets[b + 1]]``, sorted and distinct. ``words[f]`` are the DRAM words fold f moves of its
block and ``block_words[f]`` the block's words: the folds of a step move, of each block, the leading
ceil(lines x share) of its lines, where the share is the largest float64 quotient ``words / block_words`` of
the step's folds on it.
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit


@njit(cache=True)
def step_ends(input_words, weight_words, output_words, halves):
    """Last fold of each step (int64): a step ends at the first fold by which any SRAM has filled (the input's
    and the weight's with the DRAM words its folds read, the output's with those they write) ``halves[i]``
    words since the step began, or at the last fold."""
    folds = input_words.shape[0]
    ends = np.empty(folds, np.int64)
    n = 0
    start = 0
    while start < folds:
        end = folds - 1
        a = 0
        b = 0
        c = 0
        for f in range(start, folds):
            a += input_words[f]
            b += weight_words[f]
            c += output_words[f]
            if a >= halves[0] or b >= halves[1] or c >= halves[2]:
                end = f
                break
        ends[n] = end
        n += 1
        start = end + 1
    return ends[:n]


@njit(cache=True)
def _grown(buf, need):
    """``buf`` if it holds ``need`` entries, else a copy at least twice as long."""
    if need <= buf.shape[0]:
        return buf
    bigger = np.empty(max(need, 2 * buf.shape[0]), np.int64)
    bigger[:buf.shape[0]] = buf
    return bigger


@njit(cache=True)
def _moving_blocks(start, stop, block, words, seen, touched):
    """The distinct blocks the folds [start, stop) with words work on, sorted, into ``touched``; their count.
    ``seen`` (one flag per block, all clear) is left clear."""
    n = 0
    for f in range(start, stop):
        if words[f] != 0:
            b = block[f]
            if not seen[b]:
                seen[b] = True
                touched[n] = b
                n += 1
    for i in range(n):
        seen[touched[i]] = False
    touched[:n].sort()
    return n


@njit(cache=True, inline="always")
def _moving_shares(start, stop, block, words, block_words, share, seen, touched):
    """Set ``share[b]`` of every block b the folds [start, stop) move (module docstring) and list those blocks,
    sorted, in ``touched``; their count. The caller clears the shares it reads (``_moved_lines``)."""
    for f in range(start, stop):
        if words[f] != 0:
            b = block[f]
            share[b] = max(share[b], words[f] / block_words[f])
    return _moving_blocks(start, stop, block, words, seen, touched)


@njit(cache=True, inline="always")
def _moved_lines(offsets, share, b):
    """The leading lines of block ``b`` its share moves, ceil(lines x share); clears the share."""
    count = np.int64(np.ceil((offsets[b + 1] - offsets[b]) * share[b]))
    share[b] = 0.0
    return count


@njit(cache=True)
def _append_moved(start, stop, block, offsets, lines, words, block_words, share, seen, touched, buf, n):
    """Append to ``buf[n:]`` the lines the folds [start, stop) move of their blocks, block after block in
    block order (module docstring); return (buf, its new length). ``share`` (one float per block, all zero) and
    ``seen`` are left as found."""
    m = _moving_shares(start, stop, block, words, block_words, share, seen, touched)
    for i in range(m):
        b = touched[i]
        lo = offsets[b]
        count = _moved_lines(offsets, share, b)
        buf = _grown(buf, n + count)
        buf[n:n + count] = lines[lo:lo + count]
        n += count
    return buf, n


@njit(cache=True)
def _moved_count(start, stop, block, offsets, words, block_words, share, seen, touched):
    """How many lines ``_append_moved`` appends for the folds [start, stop), without making them."""
    m = _moving_shares(start, stop, block, words, block_words, share, seen, touched)
    n = 0
    for i in range(m):
        n += _moved_lines(offsets, share, touched[i])
    return n


@njit(cache=True)
def steps_lines_count(ends, in_block, in_offsets, in_words, in_block_words, wt_block, wt_offsets, wt_words,
                      wt_block_words, out_block, out_offsets, out_read_words, out_write_words, out_block_words,
                      out_r0, out_r1):
    """An upper bound of the lines ``steps_lines`` returns for the same steps and blocks, without making them:
    per step, the lines its folds move of each operand (reads and writes; reads not made distinct across the
    operands) and, of each output block it writes, two partly written lines per row (a row's two ends) or the
    block's lines, whichever are fewer."""
    n_blocks = max(in_offsets.shape[0], wt_offsets.shape[0], out_offsets.shape[0]) - 1
    share = np.zeros(n_blocks, np.float64)
    seen = np.zeros(n_blocks, np.bool_)
    touched = np.empty(n_blocks, np.int64)
    total = 0
    start = 0
    for s in range(ends.shape[0]):
        stop = ends[s] + 1
        total += _moved_count(start, stop, in_block, in_offsets, in_words, in_block_words, share, seen, touched)
        total += _moved_count(start, stop, wt_block, wt_offsets, wt_words, wt_block_words, share, seen, touched)
        total += _moved_count(start, stop, out_block, out_offsets, out_read_words, out_block_words, share, seen,
                              touched)
        total += _moved_count(start, stop, out_block, out_offsets, out_write_words, out_block_words, share, seen,
                              touched)
        m = _moving_blocks(start, stop, out_block, out_write_words, seen, touched)
        for i in range(m):
            b = touched[i]
            total += min(2 * max(out_r1[b] - out_r0[b], 0), out_offsets[b + 1] - out_offsets[b])
        start = stop
    return total


@njit(cache=True)
def _distinct_into(values, out, n_out):
    """Append the distinct values of ``values`` (sorted in place) to ``out[n_out:]``; return (out, new length)."""
    values.sort()
    out = _grown(out, n_out + values.shape[0])
    for i in range(values.shape[0]):
        if i == 0 or values[i] != values[i - 1]:
            out[n_out] = values[i]
            n_out += 1
    return out, n_out


@njit(cache=True)
def _partial_into(start, stop, block, words, seen, touched, r0, r1, c0, c1, base, ld, elem_bytes, line_bytes,
                  out, n_out):
    """Append to ``out[n_out:]`` the lines the rows of the blocks the folds [start, stop) write cover only in
    part (``interface.partial_lines`` of those rows, blocks in block order); return (out, its new length)."""
    m = _moving_blocks(start, stop, block, words, seen, touched)
    rows = 0
    for i in range(m):
        rows += max(r1[touched[i]] - r0[touched[i]], 0)
    lo = np.empty(rows, np.int64)
    hi = np.empty(rows, np.int64)
    k = 0
    for i in range(m):
        b = touched[i]
        for row in range(r0[b], r1[b]):
            lo[k] = base + (row * ld + c0[b]) * elem_bytes
            hi[k] = lo[k] + (c1[b] - c0[b]) * elem_bytes
            k += 1
    if rows > 1:
        ordered = True
        for i in range(1, rows):
            if lo[i] < lo[i - 1]:
                ordered = False
                break
        if not ordered:
            order = np.argsort(lo, kind="mergesort")
            lo, hi = lo[order], hi[order]
    ends = np.empty(2 * rows, np.int64)
    n_ends = 0
    reach = 0
    run_lo = -1  # the run being formed: its first byte (-1: none yet)
    for i in range(rows):
        if hi[i] <= lo[i]:
            continue
        if run_lo >= 0 and lo[i] > reach:  # a new run: close the one before
            n_ends = _run_ends(run_lo, reach, line_bytes, ends, n_ends)
            run_lo = -1
        if run_lo < 0:
            run_lo = lo[i]
            reach = hi[i]
        else:
            reach = max(reach, hi[i])
    if run_lo >= 0:
        n_ends = _run_ends(run_lo, reach, line_bytes, ends, n_ends)
    return _distinct_into(ends[:n_ends], out, n_out)


@njit(cache=True)
def _run_ends(run_lo, run_hi, line_bytes, ends, n):
    """Append the lines of the byte run [run_lo, run_hi) that it covers only in part; return the new count."""
    if run_lo % line_bytes != 0:
        ends[n] = run_lo // line_bytes
        n += 1
    if run_hi % line_bytes != 0:
        ends[n] = (run_hi - 1) // line_bytes
        n += 1
    return n


@njit(cache=True)
def steps_lines(ends, in_block, in_offsets, in_lines, in_words, in_block_words,
                wt_block, wt_offsets, wt_lines, wt_words, wt_block_words,
                out_block, out_offsets, out_lines, out_read_words, out_write_words, out_block_words,
                out_r0, out_r1, out_c0, out_c1, out_base, out_ld, elem_bytes, line_bytes):
    """Every step's lines: step s runs folds ends[s - 1] + 1 .. ends[s]. Of the input (``in_*``), weight
    (``wt_*``) and output (``out_*``) operands' blocks (module docstring), returns (reads, read offsets,
    writes, write offsets, partial, partial offsets): step s reads ``reads[read_offsets[s]:read_offsets[s +
    1]]``, the distinct lines its folds move of the three operands (the output's ``out_read_words``), sorted;
    writes the distinct lines its folds move of the output (``out_write_words``), sorted; and writes in part
    the lines of ``partial``, those the rows of its output blocks cover only in part (the output matrix at
    ``out_base`` bytes, leading dimension ``out_ld`` elements, block b rows [out_r0[b], out_r1[b]) x columns
    [out_c0[b], out_c1[b]) of ``elem_bytes`` each)."""
    n_steps = ends.shape[0]
    n_blocks = max(in_offsets.shape[0], wt_offsets.shape[0], out_offsets.shape[0]) - 1
    share = np.zeros(n_blocks, np.float64)
    seen = np.zeros(n_blocks, np.bool_)
    touched = np.empty(n_blocks, np.int64)
    scratch = np.empty(1024, np.int64)
    reads = np.empty(1024, np.int64)
    writes = np.empty(1024, np.int64)
    partial = np.empty(64, np.int64)
    read_off = np.zeros(n_steps + 1, np.int64)
    write_off = np.zeros(n_steps + 1, np.int64)
    partial_off = np.zeros(n_steps + 1, np.int64)
    start = 0
    for s in range(n_steps):
        stop = ends[s] + 1
        n = 0
        scratch, n = _append_moved(start, stop, in_block, in_offsets, in_lines, in_words, in_block_words, share,
                                   seen, touched, scratch, n)
        scratch, n = _append_moved(start, stop, wt_block, wt_offsets, wt_lines, wt_words, wt_block_words, share,
                                   seen, touched, scratch, n)
        scratch, n = _append_moved(start, stop, out_block, out_offsets, out_lines, out_read_words, out_block_words,
                                   share, seen, touched, scratch, n)
        reads, end = _distinct_into(scratch[:n], reads, read_off[s])
        read_off[s + 1] = end
        n = 0
        scratch, n = _append_moved(start, stop, out_block, out_offsets, out_lines, out_write_words, out_block_words,
                                   share, seen, touched, scratch, n)
        writes, end = _distinct_into(scratch[:n], writes, write_off[s])
        write_off[s + 1] = end
        partial, end = _partial_into(start, stop, out_block, out_write_words, seen, touched, out_r0, out_r1, out_c0,
                                     out_c1, out_base, out_ld, elem_bytes, line_bytes, partial, partial_off[s])
        partial_off[s + 1] = end
        start = stop
    return (reads[:read_off[n_steps]], read_off, writes[:write_off[n_steps]], write_off,
            partial[:partial_off[n_steps]], partial_off)
