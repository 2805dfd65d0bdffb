"""Chapter 8's claims: what the prose, the captions and the alt texts of book/08-cheaper-attention.md say holds on the
values the page glued (read back from the book's build; `benchmarks/calibrate_claims.py` checks them under other
seeds, threads and CPU kernels too). Timings are glued as measured and never asserted.
"""
import math

import pytest

from tests.support.claims import glued

CH8 = "08-cheaper-attention"
DESIGNS = ("multi-head", "grouped-query (g = 2)", "multi-query (g = 1)", "latent (d_c = 16)", "window of 12", "linear")


@pytest.mark.book
@pytest.mark.slow
def test_ch8_cache_sizes_of_the_big_model_are_as_the_prose_and_fig_cache_bytes_say(book):
    """'512 KiB per token, 2 GiB for 4,096 tokens'; the alt text's order of the lines, the window's bend at 4,096 and
    linear attention's flat line; MLA's 576 numbers against grouped-query attention's 2 x 8 x 128."""
    g = glued(CH8)
    assert (g["ch8_big_layers"], g["ch8_big_heads"], g["ch8_big_d_k"]) == (32, 32, 128), "the caption's model"
    assert g["ch8_big_mha_kib"] == 2 * 32 * 128 * 32 * 2 / 2**10 == 512
    assert g["ch8_big_mha_gib_at_4k"] == 2
    per_token = g["ch8_big_per_token"]
    mha, gqa, mqa = (per_token[name] for name in ("multi-head (32 key-value heads)",
                                                  "grouped-query (8 key-value heads)", "multi-query (1 key-value head)"))
    mla = per_token["latent, d_c = 512 (+ 64 for RoPE)"]
    assert mha > gqa > mla > mqa, f"per token: MHA {mha}, GQA {gqa}, MLA {mla}, MQA {mqa}: not the alt text's order"
    assert mla == 576 * 32 * 2, "MLA's cache is not d_c + d_R = 576 numbers per token and layer"
    assert g["ch8_mla_over_gqa"] == pytest.approx(576 / (2 * 8 * 128))


@pytest.mark.book
@pytest.mark.slow
def test_ch8_exercise_modules_agree_with_pytorch_and_their_caches_with_kv_cache_bytes(book):
    g = glued(CH8)
    for name in ("ch8_mha_difference", "ch8_gqa_decode_difference", "ch8_window_decode_difference"):
        assert g[name] < 1e-12, f"{name} = {g[name]:.1e}: not float64 rounding"
    assert g["ch8_mla_absorbed_difference"] < 1e-5, "the absorbed form differs from the naive beyond float32 rounding"
    assert g["ch8_linear_difference"] < 1e-5, "the three forms of linear attention differ beyond float32 rounding"
    assert g["ch8_gqa_nbytes_per_sequence"] == g["ch8_gqa_counted_bytes"] == 2 * 10 * 2 * 8 * 8
    assert g["ch8_mla_nbytes"] == g["ch8_mla_counted"] == (g["ch8_mla_n"] + 1) * g["ch8_mla_d_latent"] * 4
    assert g["ch8_linear_state_nbytes"] == g["ch8_linear_state_counted"] == 4 * (32 * 32 + 32) * 4
    assert g["ch8_table_bytes_match"] is True, "a cache of the table is not the bytes kv_cache_bytes counts"


@pytest.mark.book
@pytest.mark.slow
def test_ch8_absorbing_cuts_the_arithmetic_of_a_decoding_step(book):
    """'... floating-point operations in a naive decoding step and ... in an absorbed one, N times fewer'."""
    g = glued(CH8)
    assert g["ch8_mla_flops_ratio"] == pytest.approx(g["ch8_mla_flops_naive"] / g["ch8_mla_flops_absorbed"])
    # Rebuilding n keys and values costs 2 x 2 n d_c d_model flops; the absorbed step's products are of order h n d_c.
    n, d_c, d_model = g["ch8_mla_n"] + 1, g["ch8_mla_d_latent"], g["ch8_mla_d_model"]
    assert g["ch8_mla_flops_naive"] >= 4 * n * d_c * d_model, "the naive step does not rebuild the keys and values"
    assert g["ch8_mla_flops_ratio"] > 10, f"absorbing saves only {g['ch8_mla_flops_ratio']:.1f}x"


@pytest.mark.book
@pytest.mark.slow
def test_ch8_window_figure_and_receptive_field(book):
    """fig-window: 16 x 16 masks, a window of 4 and 2 sinks; the last query reaches 3, 6 and 9 tokens further back
    after 1, 2 and 3 layers (w - 1 = 3 per layer)."""
    g = glued(CH8)
    n, w, sinks = g["ch8_mask_n"], g["ch8_mask_window"], g["ch8_mask_sinks"]
    assert (n, w, sinks) == (16, 4, 2)
    assert g["ch8_mask_first_reached"] == [n - 1 - layers * (w - 1) for layers in (1, 2, 3)] == [12, 9, 6]
    # The band of 4 plus the sinks: query i sees min(i + 1, 4) recent keys and the sinks before them.
    assert g["ch8_mask_keys_per_query"] == [min(i + 1, w) + min(sinks, max(0, i + 1 - w)) for i in range(n)]


@pytest.mark.book
@pytest.mark.slow
def test_ch8_heads_can_be_shared_on_recall_at_equal_training(book):
    """'Sharing costs little here: at most ... of the questions at any N' (a few points: below 0.05), and fig-recall's
    alt text: the three sharing designs near 1 at every length, latent attention near them."""
    g = glued(CH8)
    recall = g["ch8_recall"]
    assert tuple(recall) == DESIGNS and g["ch8_recall_pairs_list"] == [4, 8, 16, 32, 48]
    for name in DESIGNS[:3]:
        assert min(recall[name]) > 0.95, f"{name}: recall {recall[name]}, not near 1 at every length"
    gap = max(a - b for name in DESIGNS[1:3] for a, b in zip(recall["multi-head"], recall[name]))
    assert g["ch8_sharing_gap"] == pytest.approx(gap)
    assert gap < 0.05, f"a design that shares heads trails multi-head attention by {gap:.3f}: not 'little'"
    assert min(recall["latent (d_c = 16)"]) > 0.9, f"latent attention: {recall['latent (d_c = 16)']}"
    params = g["ch8_recall_parameters"]
    assert params["multi-head"] > params["grouped-query (g = 2)"] > params["multi-query (g = 1)"]
    assert params["multi-head"] == params["window of 12"] == params["linear"], "equal parameters for equal layers"
    assert g["ch8_d_latent"] == 2 * g["ch8_d_k"], "'as many numbers per token as multi-query attention's'"


@pytest.mark.book
@pytest.mark.slow
def test_ch8_mean_pooling_loses_most_and_five_percent_of_uptraining_wins_much_back(book):
    g = glued(CH8)
    assert g["ch8_uptrain_steps"] == g["ch8_recall_steps"] // 20, "uptraining is not 5% of the steps"
    recall = g["ch8_recall"]
    for kv_heads, scratch in ((2, "grouped-query (g = 2)"), (1, "multi-query (g = 1)")):
        before, after = g["ch8_uptraining"][kv_heads]
        assert before < 0.5, f"g = {kv_heads}: {before:.3f} right after mean-pooling: it did not lose most"
        assert after > before + 0.2, f"g = {kv_heads}: uptraining only from {before:.3f} to {after:.3f}"
        assert after < recall[scratch][-1], f"g = {kv_heads}: uptrained {after:.3f}, from scratch {recall[scratch][-1]}"


@pytest.mark.book
@pytest.mark.slow
def test_ch8_window_and_linear_attention_lose_recall_as_the_alt_text_says(book):
    """fig-recall: the window near 1 while the pairs fit in it, then close to (w - 1) / N; linear attention near 1
    at N = 4 and falling at every step, far below multi-head attention at N = 48."""
    g = glued(CH8)
    recall, pairs, w = g["ch8_recall"], g["ch8_recall_pairs_list"], g["ch8_window"]
    window = recall["window of 12"]
    for n, accuracy in zip(pairs, window):
        if n + 1 <= w:
            assert accuracy > 0.95, f"window at N = {n} (fits): {accuracy:.3f}"
        else:
            assert abs(accuracy - (w - 1) / n) < 0.12, f"window at N = {n}: {accuracy:.3f}, (w - 1)/N = {(w - 1) / n:.3f}"
    linear = recall["linear"]
    assert linear[0] > 0.9, f"linear attention at N = 4: {linear[0]:.3f}, not near 1"
    assert all(b < a for a, b in zip(linear, linear[1:])), f"linear attention's recall does not fall steadily: {linear}"
    assert linear[-1] < recall["multi-head"][-1] - 0.3, f"linear {linear[-1]:.3f} at N = 48: not far below"
    assert g["ch8_window_share"] == pytest.approx((w - 1) / pairs[-1])
    assert g["ch8_recall_linear_longest"] == linear[-1] and g["ch8_recall_window_longest"] == window[-1]


@pytest.mark.book
@pytest.mark.slow
def test_ch8_evicting_the_sinks_breaks_the_model_and_keeping_them_repairs_it(book):
    """The sink paragraph and fig-sink: a head puts far more than a uniform share of its weight on the first 4 tokens;
    the window alone raises the loss; keeping <s> never makes it worse; keeping the first 4 gives back the loss of
    full attention."""
    g = glued(CH8)
    on_start = g["ch8_sink_on_start"]
    top = max(max(layer) for layer in on_start)
    assert g["ch8_sink_top_weight"] == pytest.approx(top)
    # Queries 16 to 62 see 17 to 63 keys: uniform weights give the first 4 at most 4/17.
    assert g["ch8_sink_uniform_share"] == pytest.approx(4 / 17)
    assert g["ch8_sinks"] == 4 and top > 2 * 4 / 17, f"the largest mean weight on the first 4 tokens is {top:.2f}"
    full, window = g["ch8_sink_loss_full"], g["ch8_sink_loss_window"]
    start, sinks = g["ch8_sink_loss_start"], g["ch8_sink_loss_sinks"]
    assert full < g["ch8_sink_uniform"] - 0.2, f"the model did not learn the copies: loss {full:.3f}"
    assert window > full + 0.05, f"evicting the first tokens changes the loss only from {full:.3f} to {window:.3f}"
    assert start <= window, f"keeping <s> makes the loss worse: {start:.3f} against {window:.3f}"
    assert abs(sinks - full) < 0.2 * (window - full), f"window + 4 sinks {sinks:.3f}: not back at full {full:.3f}"
    assert g["ch8_sink_uniform"] == pytest.approx(math.log(30))


@pytest.mark.book
@pytest.mark.slow
def test_ch8_page_runs_within_its_budget(book):
    """The page runs in every book build: at most 300 s of CPU time on one core (issue 32's budget)."""
    seconds = glued(CH8)["ch8_page_cpu_seconds"]
    assert seconds < 300, f"book/08-cheaper-attention.md took {seconds:.0f} s of CPU time"
