"""The run figure's time panel: a bounded number of bars, whatever the trace's stages."""

from __future__ import annotations

from simulator.studies.run_figure import MAX_BAR_LABEL_CHARS, MAX_STAGE_BARS, shown_stages


def test_many_stages_keep_the_longest_in_order_and_sum_the_rest_in_one_bar():
    stages = [(f"host/s{i}", float(i % 7), float(i % 3)) for i in range(100)]
    shown = shown_stages(stages)
    assert len(shown) == MAX_STAGE_BARS
    kept, other = shown[:-1], shown[-1]
    assert other[0] == f"{100 - (MAX_STAGE_BARS - 1)} other stages"
    names = [name for name, _, _ in kept]
    assert names == sorted(names, key=lambda n: int(n.split("s")[-1]))  # the run's order
    shortest_kept = min(c + s for _, c, s in kept)
    assert all(c + s <= shortest_kept for name, c, s in stages if name not in names)  # the longest are kept
    assert sum(c for _, c, _ in shown) == sum(c for _, c, _ in stages)
    assert sum(s for _, _, s in shown) == sum(s for _, _, s in stages)


def test_few_stages_are_drawn_as_they_are_and_a_long_label_is_cut():
    stages = [("host/a", 1.0, 2.0), ("host/" + "x" * 100, 0.5, 0.0)]
    shown = shown_stages(stages)
    assert shown[0] == stages[0]
    assert len(shown[1][0]) == MAX_BAR_LABEL_CHARS and shown[1][0].endswith("\u2026") and shown[1][1:] == (0.5, 0.0)


def test_labels_cut_to_the_same_text_stay_apart_and_a_dollar_is_drawn_as_written():
    from simulator.studies.run_figure import run_figure_png
    from simulator.results import Results

    stages = [("host/" + "x" * 60 + "A", 1.0, 0.0), ("host/" + "x" * 60 + "B", 2.0, 0.0), ("host/a$\\foo$b", 1.0, 0.0)]
    names = [name for name, _, _ in shown_stages(stages)]
    assert len(set(names)) == 3 and names[1].endswith(" (2)") and names[2] == "host/a\\$\\foo\\$b"
    results = Results()
    for name, c, s in stages:
        results.add(f"stage/{name}", "compute_s", c, "s")
        results.add(f"stage/{name}", "stall_s", s, "s")
    assert run_figure_png(results).startswith(b"\x89PNG")  # math text would raise: Unknown symbol
