"""The figure of a system's graph (``offsim show SYSTEM --png FILE``): each requester's route runs down
to the memory controller (the host's on the left, each accelerator's in a column of its own), the DRAM
channels below it; a link is labelled with its bandwidth where the configuration gives one. Drawn on
the Agg canvas; the same system gives the same bytes."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
from matplotlib.figure import Figure

from simulator.units import format_quantity
from simulator.studies.plots import save_figure

COLOURS = {"core": "#4c72b0", "accelerator": "#dd8452", "link": "#f2c45a", "cache": "#8fbf8f",
           "memory_controller": "#937860", "channel": "#c0c0c0", "near_memory": "#a0a0d0"}


def _positions(graph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Node -> (x, y): the host's chain (core, caches, memory controller) in column 0, each accelerator
    and its link in a column of its own to the right, each row one hop from the memory controller
    (requesters highest), the channels in a row below the controller, and each near memory (a memory beside
    main memory, off every route to the controller) in the row below them, in the column of the first link
    that reaches it (one no link reaches, which the wiring check refuses, in a column of its own)."""
    to_memory = nx.single_source_shortest_path_length(graph.reverse(copy=False), "memory controller")
    column, next_column = {}, 1
    for node, kind in graph.nodes(data="kind"):
        if kind == "accelerator":
            column[node] = next_column
            for link in graph.successors(node):
                column[link] = next_column
            next_column += 1
    channels = [n for n, kind in graph.nodes(data="kind") if kind == "channel"]
    pos = {n: (float(column.get(n, 0)), float(to_memory[n])) for n in graph if n in to_memory}
    pos.update({n: (float(i), -1.0) for i, n in enumerate(channels)})
    for node, kind in graph.nodes(data="kind"):
        if kind == "near_memory":
            links = [p for p in graph.predecessors(node) if p in column]
            pos[node] = (float(column[links[0]] if links else next_column), -2.0)
    return pos


def system_figure_png(graph: nx.DiGraph, title: str, path: str | Path) -> Path:
    """Draw ``graph`` (``simulator.system.system_graph``) to ``path`` as PNG; returns the path."""
    pos = _positions(graph)
    fig = Figure(figsize=(10, 9))
    ax = fig.add_subplot()
    colours = [COLOURS.get(kind, "#ffffff") for _, kind in graph.nodes(data="kind")]
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_color=colours, node_size=1500, edgecolors="black")
    nx.draw_networkx_labels(graph, pos, ax=ax, labels={n: n.replace(" ", "\n", 1) for n in graph}, font_size=7)
    nx.draw_networkx_edges(graph, pos, ax=ax, arrows=True, arrowsize=14, node_size=1500)
    labels = {(a, b): format_quantity(bw, "B/s") for a, b, bw in graph.edges(data="bandwidth_bytes_per_s") if bw}
    nx.draw_networkx_edge_labels(graph, pos, edge_labels=labels, ax=ax, font_size=7, label_pos=0.5, bbox={"fc": "white", "ec": "none"})
    ax.set_title(title)
    ax.set_axis_off()
    ax.margins(0.15)
    return save_figure(fig, path)
