"""Claims of chapter 6's section on Lee et al.'s set anomaly task, read from the values the built page glued.

The page trains three scorers of the elements of a set of digit images (each image alone, beside the mean of the
set, after one SAB) to point at the image of the odd class, over the page's seeds. Thresholds sit at the prose's
words: "above the chance of a random pick, on average" is a mean over seeds above 1/8 (single seeds came as low
as 0.144 in calibration), "below the 1/2 that no such model can pass on every seed" is every run below 1/2, "in
most sets, on every seed" is every run above 1/2.
"""
import numpy as np
import pytest

from tests.support.claims import glued

CH6 = "06-beyond-text"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_anomaly_scoring_each_image_alone_beats_chance_but_not_half(book):
    g = glued(CH6)
    size, runs = g["ch6_anomaly_size"], g["ch6_anomaly_runs_alone"]
    assert size == 8 and g["ch6_anomaly_chance"] == 1 / size, "the prose's chance is one in the set's size"
    assert len(runs) == g["ch6_seeds"], f"one run per seed: {runs}"
    assert np.mean(runs) > 1 / size, f"each image alone: {runs}, not above chance (1/{size}) on average"
    assert all(r < 1 / 2 for r in runs), f"each image alone: {runs}, not below 1/2 on every seed"
    assert g["ch6_anomaly_alone_range"] == f"{min(runs):.2f} to {max(runs):.2f}", "the glued range is the runs'"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_anomaly_models_that_see_the_set_find_the_odd_image_in_most_sets_on_every_seed(book):
    g = glued(CH6)
    for key in ("mean", "sab"):
        runs = g[f"ch6_anomaly_runs_{key}"]
        assert len(runs) == g["ch6_seeds"], f"{key}: one run per seed: {runs}"
        assert all(r > 1 / 2 for r in runs), f"{key}: {runs}, not the odd image in most sets on every seed"
        # The prose's "which scoring each image alone cannot": every run of a model that sees the set beats every
        # run of the one that does not (the latter is below 1/2 by the argument in the text, and by the test above).
        assert min(runs) > max(g["ch6_anomaly_runs_alone"]), f"{key}: {runs} against {g['ch6_anomaly_runs_alone']}"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_anomaly_sab_model_has_nearly_twice_the_parameters_of_the_mean_model(book):
    g = glued(CH6)
    sab, mean = g["ch6_anomaly_parameters_sab"], g["ch6_anomaly_parameters_mean"]
    assert 1.5 < sab / mean < 2, f"SAB model {sab:,} against {mean:,}: not nearly twice"
    for key in ("alone", "mean", "sab"):  # the spreads in the prose are those of the glued runs
        runs = g[f"ch6_anomaly_runs_{key}"]
        assert g[f"ch6_anomaly_{key}"] == f"{np.mean(runs):.3f} ± {np.std(runs, ddof=1):.3f}", key
