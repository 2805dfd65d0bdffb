"""Wrong answers that once scored full marks lose points, each in the cell(s) that name its mistake, and nowhere else.

Issue 19 found chapter 5 answers that broke the instructions and kept every
point, one post-norm mistake that cost in two cells, a missing causal mask
blamed on the layer order, and a softmax left undone that cost chapter 1's
measuring exercises too. Those mutants are part of the corpus whose verdicts
are decided in-process once per chapter (tests/support/verdicts.py, checked
against the real grader by test_verdicts.py); these tests read exactly where
each loses. (That the new alternatives keep every point under the stricter
tests is test_alternatives.py's check, through the real grader.)
"""
from __future__ import annotations

import re

import pytest

from autograde.course import graded_cell_ids
from tests.support.submissions import mutants
from tests.support.synthetic import (
    mutant_student,
)

CH1, CH5, CH6, CH7, CH8 = ("01-weighted-sum", "05-transformer", "06-beyond-text", "07-backward-pass",
                            "08-cheaper-attention")

# (assignment, grade_id, mutant) -> the test cells where it must lose points, exactly.
LOSES_EXACTLY = {
    (CH5, "apply_rope", "default_positions_first_axis"): {"test_apply_rope_complex"},
    (CH5, "TinyGPT", "post_norm_blocks"): {"test_TinyGPT_pre_norm"},
    (CH5, "TinyGPT", "ff_width_d_model"): {"test_TinyGPT_ff_width"},
    (CH5, "TinyGPT", "no_final_norm"): {"test_TinyGPT_final_norm"},
    # The visible test sees the all-zero weights of position 0, which may attend to nothing.
    (CH5, "TinyGPT", "mask_hides_current"): {"test_TinyGPT", "test_TinyGPT_causal"},
    (CH5, "crossover_length", "typed_without_measuring"): {
        "test_crossover_length", "test_crossover_length_counts", "test_crossover_length_value"},
    # One post-norm mistake, one cell: the masks cell checks only what the mask decides in that variant.
    (CH5, "TransformerBlock", "always_pre_norm"): {"test_TransformerBlock_post_norm"},
    (CH5, "TransformerBlock", "post_norm_inside_residual"): {"test_TransformerBlock_post_norm"},
    (CH5, "TransformerBlock", "flipped_mask"): {"test_TransformerBlock_masks"},
    (CH5, "crossover_length", "one_product"): {"test_crossover_length_counts"},
    (CH5, "crossover_length", "strictly_more"): {"test_crossover_length_value"},
    # Undone, softmax costs its own four cells; the temperature and bandwidth measurements run again without it.
    (CH1, "softmax", "not_done"): {"test_softmax", "test_softmax_stability", "test_softmax_masking", "test_softmax_axes"},
    # Chapter 6: a ViT mistake the visible worked example charges costs test_ViT only (the oracle measures whether
    # the logits depend on the positions or the final norm, and writes each block in its own norm order).
    **{(CH6, "ViT", name): {"test_ViT"} for name in ("no_position_embedding", "class_token_without_position",
                                                     "post_norm_blocks", "no_final_norm")},
    # Chapter 7: a cache of block masks kept between calls is what the forward leaves alive; D's derivation is graded
    # in its own cell.
    (CH7, "FlashAttention", "caches_block_masks"): {"test_FlashAttention_saved"},
    # A wrong gradient of exercise 7.4 costs the gradient cell only (issue 31): the visible test checks the forward
    # pass, gradcheck is part of the gradient cell, and the causal, no-key and stability cells compare the gradients
    # with the student's own on an equivalent problem.
    **{(CH7, "FlashAttention", name): {"test_FlashAttention_gradients"} for name in (
        "dQ_without_scale", "dK_without_scale", "missing_D")},
    **{(CH7, "output_row_sums", name): {"test_output_row_sums"} for name in (
        "mean_over_features", "product_of_norms", "product_of_sums", "sums_over_queries")},
    # Chapter 8: a naive form passed as absorbed computes the right outputs and loses the stated bound only; a cache
    # that repeats the kv heads gives right outputs and loses the visible shape check and the cache's own cell; a
    # mask aligned top-left is right without a cache and loses only the decoding cell.
    (CH8, "LatentAttention", "naive_when_absorbed"): {"test_LatentAttention_memory"},
    (CH8, "GroupedQueryAttention", "cache_repeats_heads"): {"test_GroupedQueryAttention",
                                                            "test_GroupedQueryAttention_cache_shape"},
    (CH8, "GroupedQueryAttention", "top_left_causal"): {"test_GroupedQueryAttention_cache"},
    (CH8, "linear_attention", "state_ignored"): {"test_linear_attention_state"},
    (CH8, "linear_attention", "chunk_size_ignored"): {"test_linear_attention_memory"},
}
# Where a message must name the likely mistake: (assignment, grade_id, mutant, cell) -> (must say, must not say).
MESSAGES = {
    (CH5, "TinyGPT", "no_causal_mask", "test_TinyGPT_induction"): ("causal mask", "layer order"),
    (CH5, "TinyGPT", "post_norm_blocks", "test_TinyGPT_pre_norm"): ("norm_first=True", None),
    (CH5, "TinyGPT", "ff_width_d_model", "test_TinyGPT_ff_width"): ("4 * d_model", None),
    (CH5, "TinyGPT", "no_final_norm", "test_TinyGPT_final_norm"): ("final nn.LayerNorm", None),
    (CH5, "TinyGPT", "mask_hides_current", "test_TinyGPT_causal"): ("diagonal", None),
    (CH5, "apply_rope", "default_positions_first_axis", "test_apply_rope_complex"): ("second-last axis", None),
    (CH5, "crossover_length", "strictly_more", "test_crossover_length_value"): ("at least as many", None),
    (CH5, "crossover_length", "one_product", "test_crossover_length_counts"): ("ONE of the two products", None),
    (CH8, "GroupedQueryAttention", "kv_head_modulo", "test_GroupedQueryAttention"): ("= 1 % 2?", None),
    (CH8, "LatentAttention", "naive_when_absorbed", "test_LatentAttention_memory"): ("T * d_head = 12,800", None),
    (CH8, "linear_attention", "phi_relu", "test_linear_attention"): ("NaN", None),
}
CASES = set(LOSES_EXACTLY) | {k[:3] for k in MESSAGES}
MUTANTS_HERE = [(a, g, p) for a, g, p in mutants() if (a, g, p.stem) in CASES]


def lost_cells(verdicts: dict) -> set[str]:
    """The test cells that one student's `verdicts` (``{cell: (passed, message)}``) do not give full points."""
    return {cell for cell, (passed, _) in verdicts.items() if not passed}


def test_the_cases_name_real_mutants():
    found = {(a, g, p.stem) for a, g, p in MUTANTS_HERE}
    assert CASES == found, f"no mutant file for {sorted(CASES - found)}"
    for (assignment, _, _), cells in LOSES_EXACTLY.items():
        assert cells <= set(graded_cell_ids(assignment)), f"not test cells of {assignment}: {cells}"


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(LOSES_EXACTLY), ids=lambda c: f"{c[1]}/{c[2]}")
def test_a_mistake_loses_points_exactly_in_the_cells_that_name_it(in_process_verdicts, case):
    assignment, grade_id, name = case
    lost = lost_cells(in_process_verdicts(assignment)[mutant_student(grade_id, name)])
    assert lost == LOSES_EXACTLY[case], f"{grade_id}/{name} loses points in {sorted(lost)}, not {sorted(LOSES_EXACTLY[case])}"


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(MESSAGES), ids=lambda c: f"{c[1]}/{c[2]}/{c[3]}")
def test_the_message_names_the_likely_mistake(in_process_verdicts, case):
    assignment, grade_id, name, cell = case
    passed, message = in_process_verdicts(assignment)[mutant_student(grade_id, name)][cell]
    says, never = MESSAGES[case]
    assert not passed, f"{grade_id}/{name} keeps its points in {cell}"
    assert says in message, f"{cell}'s message for {name} does not say {says!r}: {message}"
    assert never is None or never not in message, f"{cell}'s message for {name} says {never!r}: {message}"


def significant_digits(number: str) -> int:
    """The significant digits of a decimal written out: 0.00999823 has 6, 0.019999999552965164 has 17."""
    return len(number.replace(".", "").lstrip("0"))


def test_significant_digits_are_counted_without_leading_zeros():
    assert [significant_digits(x) for x in ("0.00999823", "0.019999999552965164", "12.5", "100.0")] == [6, 17, 3, 4]


@pytest.mark.slow
def test_chapter_5_messages_show_rounded_numbers(in_process_verdicts):
    # A float32 0.02 printed in full reads 0.019999999552965164: the tests round what a student reads.
    # (Every mutant of chapter 5, the reference and the notebook as released; a correct alternative's cells pass,
    # with no message to round.)
    students = in_process_verdicts(CH5)
    long = {(s, c): message for s, verdicts in students.items() for c, (_, message) in verdicts.items()
            if any(significant_digits(x) > 7 for x in re.findall(r"\d+\.\d+", message))}
    assert not long, f"unrounded numbers in chapter 5's messages: {long}"


@pytest.mark.slow
def test_the_reference_keeps_every_point(in_process_verdicts):
    for assignment in (CH1, CH5):
        lost = lost_cells(in_process_verdicts(assignment)["reference"])
        assert not lost, f"the reference loses points in {assignment}: {sorted(lost)}"
