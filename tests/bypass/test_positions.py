"""Position bookkeeping: alignment, windows, controls, subsets, shuffles, spans (property-style loops)."""

from __future__ import annotations

import random

import pytest

from ariadne_lc.bypass import ExampleLayoutError, LayerSpan, SequenceLayout, even_spans
from ariadne_lc.bypass._positions import control_positions, density_subset, shuffle_order


def _layouts(count: int) -> list[SequenceLayout]:
    rng = random.Random(1234)
    return [
        SequenceLayout(rng.randint(1, 40), rng.randint(1, 40), rng.randint(0, 4), rng.randint(1, 8))
        for _ in range(count)
    ]


def test_control_positions_never_overlap_the_window() -> None:
    drawn = 0
    for layout in _layouts(300):
        for seed in range(5):
            for name, window in (("base", layout.cot), ("expanded", layout.expanded), ("shrunk", layout.shrunk)):
                outside = layout.length - len(window)
                if outside < len(window):
                    with pytest.raises(ExampleLayoutError, match="control"):
                        control_positions(layout, window, seed, name)
                    continue
                control = control_positions(layout, window, seed, name)
                drawn += 1
                assert len(control) == len(window)
                assert len(set(control)) == len(control)
                assert not set(control) & set(window)
                assert all(0 <= i < layout.length for i in control)
                assert control == control_positions(layout, window, seed, name)  # seeded
    assert drawn > 1000


def test_controls_depend_on_the_seed() -> None:
    layout = SequenceLayout(30, 10, 2, 3)
    draws = {control_positions(layout, layout.cot, seed, "base") for seed in range(20)}
    assert len(draws) > 15


def test_alignment_maps_outside_positions_to_the_same_token() -> None:
    rng = random.Random(7)
    for layout in _layouts(200):
        prompt = [rng.randrange(1000) for _ in range(layout.n_prompt)]
        cot = [rng.randrange(1000) for _ in range(layout.n_cot)]
        rest = [rng.randrange(1000) for _ in range(layout.n_prefix + layout.n_answer)]
        with_cot, without = prompt + cot + rest, prompt + rest
        assert len(with_cot) == layout.length and len(without) == layout.no_cot_length
        for i in range(layout.length):
            source = layout.source_position(i)
            assert 0 <= source < layout.no_cot_length
            if i in layout.cot:
                assert source < layout.n_prompt  # CoT slots take prompt states, never answer states
            else:
                assert with_cot[i] == without[source]


def test_cot_alignment_is_right_aligned_and_wraps() -> None:
    layout = SequenceLayout(n_prompt=5, n_cot=3, n_prefix=0, n_answer=1)
    assert [layout.source_position(i) for i in layout.cot] == [2, 3, 4]
    long_cot = SequenceLayout(n_prompt=3, n_cot=5, n_prefix=0, n_answer=1)
    assert [long_cot.source_position(i) for i in long_cot.cot] == [1, 2, 0, 1, 2]
    with pytest.raises(IndexError):
        layout.source_position(layout.length)


def test_windows() -> None:
    layout = SequenceLayout(n_prompt=4, n_cot=5, n_prefix=1, n_answer=2)
    assert layout.cot == range(4, 9)
    assert layout.expanded == range(3, 10)
    assert layout.shrunk == range(5, 8)
    assert len(SequenceLayout(4, 2, 0, 1).shrunk) == 0
    assert layout.answer_start == 10 and layout.no_cot_answer_start == 5


@pytest.mark.parametrize(("field", "value"), [("n_prompt", 0), ("n_cot", 0), ("n_answer", 0), ("n_prefix", -1)])
def test_layout_rejects_empty_pieces(field: str, value: int) -> None:
    counts = {"n_prompt": 3, "n_cot": 3, "n_prefix": 0, "n_answer": 1, field: value}
    with pytest.raises(ExampleLayoutError):
        SequenceLayout(**counts)


def test_density_subsets() -> None:
    window = range(10, 20)
    assert len(density_subset(window, 0.8, 0)) == 8
    assert len(density_subset(window, 0.4, 0)) == 4
    assert len(density_subset(range(3, 4), 0.4, 0)) == 1  # at least one position
    for seed in range(50):
        subset = density_subset(window, 0.6, seed)
        assert list(subset) == sorted(set(subset)) and set(subset) <= set(window)
    with pytest.raises(ValueError, match="fraction"):
        density_subset(window, 0.0, 0)


def test_shuffle_moves_something() -> None:
    assert shuffle_order(1, 0) == (0,)
    for n in range(2, 12):
        for seed in range(20):
            order = shuffle_order(n, seed)
            assert sorted(order) == list(range(n)) and list(order) != list(range(n))


def test_even_spans() -> None:
    assert [(s.start, s.stop) for s in even_spans(30, 4)] == [(0, 8), (8, 16), (16, 23), (23, 30)]
    assert even_spans(4, 4) == tuple(LayerSpan(start=i, stop=i + 1) for i in range(4))
    with pytest.raises(ValueError, match="n_spans"):
        even_spans(4, 5)
    with pytest.raises(ValueError, match="empty"):
        LayerSpan(start=3, stop=3)
