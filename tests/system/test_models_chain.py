"""``offsim models chain``: the matrix-chain data-movement model (004 app. D) on its own."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from simulator.cli import main
from tests.conftest import refused


def test_the_default_is_004_s_worked_example(capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "chain"]) == 0
    text = capsys.readouterr().out
    # 004 section D.7 (004:L5302-L5330): 1,092,977,664 ops, 10,190,344 unfused and 8,392,058 fused words, 17.6 %
    for figure in ("((A1(A2A3))((A4A5)A6)), 1,092,977,664 multiply-adds", "10,190,344 words", "8,392,058 words",
                   "17.6% less", "A1..A3: fused right A_i (A_k A_j), tile 312 x 210",
                   "A4..A6: fused left (A_i A_k) A_j, tile 220 x 297"):
        assert figure in text


def test_a_chain_of_one_s_own_goes_to_the_csv_in_words_and_bytes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "c.csv"
    assert main(["models", "chain", "--dims", "100,200,50,300", "--m-elems", "1024", "--elem-bytes", "4",
                 "--out", str(out)]) == 0
    with out.open() as fh:
        row = next(csv.DictReader(fh))
    # (A1 A2) A3 costs 100*200*50 + 100*50*300 = 2.5e6 multiply-adds against 200*50*300 + 100*200*300 = 9e6
    assert row["tree"] == "((A1A2)A3)" and int(row["op_count"]) == 2_500_000
    assert int(row["fused_words"]) <= int(row["unfused_words"])
    assert int(row["fused_bytes"]) == 4 * int(row["fused_words"])


@pytest.mark.parametrize("argv, message", [
    (["--dims", "3,4"], "--dims '3,4': expected three or more positive integers"),
    (["--dims", "3,x,4"], "--dims '3,x,4': expected three or more positive integers"),
    (["--dims", "3,0,4"], "--dims '3,0,4': expected three or more positive integers"),
    (["--dims", ",".join(["100"] * 258)], "--dims: 257 matrices; expected at most 256"),
    (["--m-elems", "0"], "--m-elems 0: expected an integer >= 1"),
    (["--elem-bytes", "-8"], "--elem-bytes -8: expected an integer >= 1"),
    (["--dims", "10,10,10,10"], "--dims 10,10,10,10 with --m-elems 65536: the model's volumes (214 and -81 words) fall "
                                "below the 400 words that reading the inputs and writing the result take once"),
])
def test_bad_chain_input_is_refused_with_one_message(argv: list[str], message: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "c.csv"
    errors = refused(["models", "chain", *argv, "--out", str(out)], capsys, out)
    assert len(errors) == 1 and message in errors[0]


def test_a_figure_asked_of_a_model_that_draws_none_is_refused(tmp_path: Path) -> None:
    from simulator.studies.chain_eval import run_chain
    from simulator.errors import InputError
    from simulator.studies.model_eval import Outputs

    with pytest.raises(InputError, match="this model draws no figure"):
        run_chain(None, None, 8, Outputs(png=str(tmp_path / "c.png")))
    assert not (tmp_path / "c.png").exists()
