"""change_focus: where a canvas pane opens on what a pass changed, and each change's place in the graph (the
canvas's change strip puts one mark per changed node there: inputs left, outputs right)."""

from __future__ import annotations

from ge_core.viz.canvas_focus import change_focus
from ge_core.viz.graph_diff import diff_graphs
from tests.viz.graphs import chain, f32


def test_the_changed_nodes_places_run_from_the_first_node_to_the_last() -> None:
    before = chain(11)
    after = before.copy()
    after.node("relu0").attrs["alpha"] = 0.5  # first node changed
    after.node("relu10").attrs["alpha"] = 0.5  # last node changed
    after.node("relu5").attrs["alpha"] = 0.5  # the middle one
    diff = diff_graphs(before, after)
    focus = change_focus(after, diff, "after", {})
    assert focus.changed and focus.nodes == ("relu0", "relu5", "relu10")
    assert focus.places == (0.0, 0.5, 1.0)
    assert focus.first == "relu0"


def test_a_removed_node_has_its_place_in_the_before_graph_only() -> None:
    before = chain(5)
    after = before.copy()
    after.replace_all_uses(after.node("relu4").outputs[0], after.node("relu3").outputs[0])
    after.erase(after.node("relu4"))
    diff = diff_graphs(before, after)
    removed = change_focus(before, diff, "before", {})
    assert removed.nodes == ("relu4",) and removed.places == (1.0,)
    untouched = change_focus(after, diff, "after", {})  # nothing marked there: its first op, no change listed
    assert not untouched.changed and untouched.places == () and untouched.nodes == ("relu0",)


def test_a_one_node_graph_places_its_change_at_the_start() -> None:
    before = chain(1)
    after = before.copy()
    after.set_desc(after.node("relu0").outputs[0], f32(1, 8))
    focus = change_focus(after, diff_graphs(before, after), "after", {})
    assert focus.places == (0.0,)
