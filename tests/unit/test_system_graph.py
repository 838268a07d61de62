"""The system as a graph: components and links from the config, routes to memory, the wiring check."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.config.accelerators import COUPLINGS
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.interconnect.couplings import COUPLING_STRATEGIES, MEMORY_CONTROLLER as MEMORY
from simulator.system import check_wiring, routes, system_graph
from tests.component.test_dram_standards import INTERFACE, system_file

SYSTEMS = Path(__file__).resolve().parents[2] / "configs" / "systems"


def _spec(name: str, *overrides: str) -> SystemSpec:
    return load_spec(SYSTEMS / name, SystemSpec, list(overrides)).spec


def test_every_coupling_enters_the_host_side_somewhere():
    assert set(COUPLING_STRATEGIES) == set(COUPLINGS)


@pytest.mark.parametrize("coupling, via", [("llc", "LLC"), ("dram", MEMORY), ("near_memory", MEMORY),
                                           ("in_pipeline", "L1D")])
def test_each_requesters_route_follows_its_coupling(coupling, via):
    graph = system_graph(_spec("lap_llc.yaml", f"accelerators.lap.interface.coupling={coupling}"))
    found = routes(graph)
    assert found["host"] == ["host", "L1D", "L2", "LLC", MEMORY]
    assert found["lap"][:3] == ["lap", f"lap link ({coupling})", via] and found["lap"][-1] == MEMORY


def test_hops_carry_the_configured_figures():
    spec = _spec("lap_llc.yaml")
    graph = system_graph(spec)
    assert graph.edges["lap", "lap link (llc)"]["bandwidth_bytes_per_s"] == 12.8e9
    assert graph.edges["LLC", MEMORY]["latency_s"] == spec.host.memory_path_latency_s
    # DDR3-1600: 64-bit bus, two transfers per 1.25 ns clock
    assert graph.edges[MEMORY, "DRAM channel 0"]["bandwidth_bytes_per_s"] == pytest.approx(12.8e9)
    # a cache level's energy per byte is charged under the inclusive_per_byte model only
    assert graph.edges["host", "L1D"]["energy_j_per_byte"] is None and spec.energy.model == "actions"
    assert graph.edges["LLC", MEMORY]["energy_j_per_byte"] == spec.host.memory_path_energy_j_per_byte
    per_byte = system_graph(_spec("lap_llc.yaml", "energy.model=inclusive_per_byte"))
    assert per_byte.edges["host", "L1D"]["energy_j_per_byte"] == spec.caches.levels[0].energy_j_per_byte


def test_a_memorys_hop_carries_the_interface_energy_a_run_charges_on_its_bytes():
    """The hop into main memory and the hop into a near memory show the energy per byte the account charges on
    the bytes that memory moves (its off-chip interface), as ``offsim show`` prints it."""
    import simulator

    path = SYSTEMS / "lap_hbm_stack.yaml"
    stack_energy = ["near_memories.hbm.interface_energy_j_per_bit=4 pJ/bit"]  # the file's is 0: a figure to check
    graph = system_graph(_spec(path.name, *stack_energy))
    run = simulator.run(path, {"generator": "stream", "params": {"kind": "read", "array_bytes": "64 KiB"}},
                        stack_energy).summary()
    main_bytes = (run["dram"]["reads"] + run["dram"]["writes"]) * 64
    assert main_bytes > 0
    charged = run["energy_by_component_j"]["dram_interface"] / main_bytes
    assert graph.edges[MEMORY, "DRAM channel 0"]["energy_j_per_byte"] == pytest.approx(charged, rel=1e-12)
    assert graph.edges[MEMORY, "DRAM channel 0"]["energy_j_per_byte"] == pytest.approx(160e-12)  # 20 pJ/bit
    gemm = {"generator": "lap_gemm", "params": {"m": 64, "n": 64, "k": 64, "produce_inputs": True}}
    run = simulator.run(path, gemm, stack_energy).summary()  # the LAP's operands live in the stack
    stack_bytes = run["actions"]["hbm"]["lap"]["bytes"]
    assert stack_bytes > 0
    charged = run["energy_by_requester_j"]["hbm"]["lap"]["interface"] / stack_bytes
    assert graph.edges["lap link (near_memory)", "hbm"]["energy_j_per_byte"] == pytest.approx(charged, rel=1e-12)
    assert charged == pytest.approx(32e-12)  # 4 pJ/bit


@pytest.mark.parametrize("preset", sorted(INTERFACE))  # one preset of each standard
def test_a_channel_shows_the_dram_models_peak_and_first_read(preset, tmp_path_factory):
    """Each channel's hop carries the DRAM model's own figures on every standard: its peak (bursts of
    ``burst_length`` beats, at the standard's beats per clock) and the completion of an isolated read of a line
    to an idle, closed bank (tRCD + CL + the line's bursts back to back), which the host core's timing uses."""
    import numpy as np

    from simulator.config.schema import dram_parameters
    from simulator.memory.dram import DramSystem
    from simulator.system import dram_unloaded_latency_ps

    spec = load_spec(system_file(tmp_path_factory.mktemp(preset), preset), SystemSpec).spec
    timing, currents, geometry = dram_parameters(spec)
    dram = DramSystem(timing, currents, geometry)
    hop = system_graph(spec).edges[MEMORY, "DRAM channel 0"]
    assert hop["bandwidth_bytes_per_s"] == pytest.approx(dram.peak_bandwidth_bytes_per_s / geometry.channels)
    first_read_ps = int(dram.service_lines(np.array([0]), np.array([False]), 0)[0])
    assert dram_unloaded_latency_ps(spec) == first_read_ps
    assert hop["latency_s"] == pytest.approx(first_read_ps * 1e-12)


def test_the_wiring_check_refuses_an_unreachable_or_dangling_component():
    graph = system_graph(_spec("lap_llc.yaml"))
    check_wiring(graph)
    cut = graph.copy()
    cut.remove_edge("lap link (llc)", "LLC")
    with pytest.raises(ValueError, match="'lap' has no route"):
        check_wiring(cut)
    dangling = graph.copy()
    dangling.add_node("orphan link", kind="link")
    with pytest.raises(ValueError, match="'orphan link' \\(link\\) lies on no requester's route"):
        check_wiring(dangling)


def test_offsim_show_prints_the_routes_and_draws_the_graph(tmp_path, capsys):
    from simulator.cli import main

    png = tmp_path / "g.png"
    assert main(["show", str(SYSTEMS / "lap_llc.yaml"), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "  lap: lap -> lap link (llc) -> LLC -> memory controller" in out
    assert "memory controller -> DRAM channel 0" in out and "12.8 GB/s" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("system", sorted(p.name for p in SYSTEMS.glob("*.yaml")))
def test_every_shipped_system_is_drawn_with_every_node_placed(system):
    """A near memory sits off every route to the memory controller: it is placed below its link's column."""
    from simulator.runner import load_system
    from simulator.studies.system_figure import _positions

    graph = system_graph(load_system(SYSTEMS / system).spec)
    pos = _positions(graph)
    assert set(pos) == set(graph.nodes)
    near = [n for n, kind in graph.nodes(data="kind") if kind == "near_memory"]
    for node in near:
        link = next(graph.predecessors(node))
        assert pos[node] == (pos[link][0], -2.0)
    if system == "lap_hbm_stack.yaml":
        assert near == ["hbm"]
