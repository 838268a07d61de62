"""The hand-written trace example (workloads/examples/gemm_offload.py) runs, from Parquet and from CSV alike."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq

from simulator.cli import main
from tests.conftest import CONFIGS, ROOT
from workloads.examples import gemm_offload


def _lap(run_dir) -> dict[str, float]:
    table = pq.read_table(run_dir / "results.parquet").to_pandas()
    return {r.quantity: r.value for r in table[table.component == "accel/lap"].itertuples()}


def test_the_example_writes_a_trace_that_offloads_its_gemm_to_the_lap(tmp_path, capsys):
    done = subprocess.run([sys.executable, "-m", "workloads.examples.gemm_offload", str(tmp_path / "ex")],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.count("written") == 4
    paths = {key: tmp_path / "ex" / path.name for key, path in gemm_offload.write_example(tmp_path / "x").items()}
    system = str(CONFIGS / "systems" / "lap_dram.yaml")
    assert main(["validate", system, str(paths["workload"]), str(paths["workload_csv"]), str(paths["csv"])]) == 0
    for key in ("workload", "workload_csv"):
        assert main(["run", system, str(paths[key]), "--out", str(tmp_path / key)]) == 0
    lap, lap_csv = _lap(tmp_path / "workload"), _lap(tmp_path / "workload_csv")
    m, n, k = gemm_offload.M, gemm_offload.N, gemm_offload.K
    assert lap["commands"] == 1 and lap["flops"] == 2 * m * n * k
    assert lap["bytes_read"] == (m * k + k * n) * gemm_offload.ELEM_BYTES  # A and B, C overwritten
    assert lap == lap_csv
    times = [json.loads((tmp_path / key / "summary.json").read_text())["simulated_time_s"]
             for key in ("workload", "workload_csv")]
    assert times[0] == times[1] > 0
