"""000 Fig. 6.4 and the section 6.4 worked example: Accelerometer on Table 4.3's UltraSPARC T2 AES row, as the
logca-crypto report compares them (simulator/studies/reproduce.py, _t2_regions)."""

from __future__ import annotations

from simulator.studies.logca import crypto as ls
from simulator.studies.references import index_rows, load_reference
from simulator.studies.reproduce import _t2_regions


def test_fig_6_4_entries_follow_from_table_4_3():
    section = _t2_regions(index_rows(load_reference("logca_crypto")), ls.load_platform("ultrasparc_t2", "aes").logca)
    ours = {row.key[2]: row.ours for row in section.rows}
    assert ours["achievable speedup"] == 19.0  # the bound of a compute-bound kernel is A (000 eq. 6.1)
    assert ours["A starts"] == 2048 and ours["o stops"] == 32768  # 000:L1402, on the power-of-two grid
    assert ours["granularity for speedup 12"] == 16384  # 000:L1542
