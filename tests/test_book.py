"""The book builds strictly, shows the exercise notebooks unexecuted, and leaks no solution.

The tests that take the `book` fixture build the book (every chapter executed, cached) and are marked `book` and
`slow`; the check of the pages' code against the answers reads only the sources and is fast.
"""
import html
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from autograde.course import REPO, assignment_ids
from autograde.reference import load_reference
from tests.support.leaks import OTHER_FRAMEWORK, code_leaks, page_code, page_leaks, secret_lines

BOOK_PAGES = sorted((REPO / "book").glob("0*.md"))


def page_text(path: Path) -> str:
    """The visible text of an HTML page, tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


@pytest.mark.book
@pytest.mark.slow
@pytest.mark.parametrize("assignment", assignment_ids())
def test_chapter_and_exercise_pages_exist(book, assignment):
    chapter = book / "book" / f"{assignment}.html"
    exercise = book / "exercises" / assignment / f"{assignment}.html"
    assert chapter.is_file() and exercise.is_file()
    page = exercise.read_text()
    # The download button offers the student notebook itself.
    assert f'_sources/exercises/{assignment}/{assignment}.ipynb"' in page
    assert (book / "_sources" / "exercises" / assignment / f"{assignment}.ipynb").is_file()
    # Shown as students get it: not executed, so no NotImplementedError output.
    assert "NotImplementedError</span>:" not in page and 'class="cell_output' not in page


@pytest.mark.book
@pytest.mark.slow
@pytest.mark.parametrize("assignment", assignment_ids())
def test_chapter_is_executed_with_figures_that_have_alt_text(book, assignment):
    page = (book / "book" / f"{assignment}.html").read_text()
    images = re.findall(r"<img [^>]*>", page)
    figures = [i for i in images if "_images/" in i]
    assert len(figures) >= 4, f"expected a figure for each key idea, found {len(figures)}"
    missing = [i for i in figures if not re.search(r'alt="[^"]{20,}"', i)]
    assert not missing, f"figures without alt text: {missing}"
    assert 'class="cell_output' in page, "no executed output on the chapter page"
    assert "Traceback" not in page_text(book / "book" / f"{assignment}.html")


@pytest.mark.book
@pytest.mark.slow
def test_no_solution_line_in_the_book(book):
    secrets = [line for a in assignment_ids() for line in secret_lines(a)]
    pages = {p: page_text(p) for p in book.rglob("*.html")}
    sources = {p: p.read_text() for p in (book / "_sources").rglob("*") if p.is_file()}
    for path, text in {**pages, **sources}.items():
        leaked = [line for line in secrets if line in text]
        assert not leaked, f"{path} shows solution or hidden-test lines: {leaked[:3]}"
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, path


@pytest.mark.book
@pytest.mark.slow
def test_instructor_material_is_not_in_the_book(book):
    for folder in ("solutions", "autograde", "tests"):
        assert not (book / folder).exists(), f"{folder}/ was built into the book"
        assert not (book / "_sources" / folder).exists()


@pytest.mark.book
@pytest.mark.slow
def test_bibliography_lists_the_cited_papers(book):
    text = page_text(book / "book" / "references.html")
    for author in ("Nadaraya", "Watson", "Vaswani", "Bridle"):
        assert author in text


@pytest.mark.book
@pytest.mark.slow
def test_maths_is_typeset_from_the_build_not_a_cdn(book):
    """Offline readers (a train, an exam room) get typeset maths: MathJax is served from the book itself."""
    pages = list(book.rglob("*.html"))
    remote = [p for p in pages if re.search(r'<script[^>]+src="https?://[^"]*mathjax', p.read_text())]
    assert not remote, f"pages that load MathJax from the network: {remote[:3]}"
    local = [p for p in pages if 'src="../_static/mathjax/tex-mml-chtml.js' in p.read_text()]
    assert local, "no page loads the MathJax served from _static/mathjax"
    assert (book / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert list((book / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


@pytest.mark.book
@pytest.mark.slow
def test_no_page_points_a_script_style_or_image_at_the_network(book):
    """Offline also for what loads later: no tag fetches from the web, and no inline script names a URL to fetch.

    The browser test sees what a page loads; this sees loaders that wait for a click (thebe's CDN bundle did).
    Links a reader follows (<a href>) are fine.
    """
    remote_tag = re.compile(r'<(?:script|link|img|iframe|source|video|audio|embed)\b[^>]*\b(?:src|href)="(https?://[^"]*)"')
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S)
    found = []
    for page in book.rglob("*.html"):
        text = page.read_text()
        urls = remote_tag.findall(text) + [u for s in inline_script.findall(text) for u in re.findall(r"https?://[^\s\"'<]+", s)]
        found += [f"{page.relative_to(book)}: {u}" for u in urls]
    for sheet in book.rglob("*.css"):
        found += [f"{sheet.relative_to(book)}: {u}" for u in re.findall(r"url\(\s*['\"]?(https?://[^)'\"]+)", sheet.read_text())]
    assert not found, "the book fetches from the network:\n" + "\n".join(found[:20])


# ---------------------------------------------------------------------------------------------------------------
# No page shows an answer in any form: the check on tokens (tests/support/leaks.py).
# ---------------------------------------------------------------------------------------------------------------

# The cases of issue 19, verbatim from the pages as they were (commit 9ebebca): each must be caught.
ISSUE_19_CASES = {
    "ch1 Gaussian score written out with torch.cdist (exercise 1.5)": ("""
keys = torch.tensor([[0.0, 0.0], [1.0, 0.2], [1.7, 1.1], [0.4, 1.8], [1.6, -0.8], [2.6, 0.3]])
query = torch.tensor([[1.3, 0.6]])
scores = -torch.cdist(query, keys) ** 2 / (2 * 0.5**2)  # Gaussian score, bandwidth 0.5
weights = torch.softmax(scores, dim=-1)[0]
""", "gaussian_scores"),
    "ch1 kernel weights, Nadaraya-Watson in torch (exercises 1.5-1.7)": ('''
def kernel_weights(x_query, x_train, bandwidth):
    """Weights (m, n): softmax over the training points of the Gaussian score."""
    distance = torch.cdist(x_query[:, None], x_train[:, None])  # (m, n)
    return torch.softmax(-(distance**2) / (2 * bandwidth**2), dim=-1)


estimates = {sigma: kernel_weights(x_query, x_train, sigma) @ y_train
             for sigma in (0.05, 0.3, 2.0)}
''', "nadaraya_watson"),
    "ch2 Seq2Seq.decode wires the attention as exercise 2.4 does": ('''
    def encode(self, source):
        lengths = (source != PAD).sum(1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embed_source(source), lengths, batch_first=True,
                                                   enforce_sorted=False)
        packed_states, last = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(packed_states, batch_first=True, total_length=source.shape[1])
        initial = torch.tanh(self.init_state(torch.cat([last[0], last[1]], -1)))[None]
        return states, initial, (source != PAD)[:, None, :]

    def decode(self, inputs, encoded, state):
        keys, _, mask = encoded
        queries, state = self.decoder(self.embed_target(inputs), state)  # (B, T, hidden)
        if self.attention is None:
            context = keys.new_zeros(queries.shape[:2] + keys.shape[2:])
            weights = keys.new_zeros(queries.shape[:2] + keys.shape[1:2])
        else:
            context, weights = self.attention(queries, keys, keys, mask)  # (B, T, 2 hidden), (B, T, n)
        return self.predict(torch.cat([queries, context], -1)), weights, state
''', "decoder_attention"),
    "ch3 NumPy attention in a remove-input cell (exercise 3.1)": ("""
def numpy_attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ V
""", "self-attention"),
    "ch4 full_attention, exercise 3.1 reprinted": ('''
def full_attention(Q, K, V):
    """softmax(Q K^T / sqrt(d)) V, holding the whole (m, n) score matrix."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ V
''', ""),
    "ch4 causal pass with np.tril, exercises 3.1 and 3.2 reprinted": ("""
scores = np.where(np.tril(np.ones((200, 200), bool)), (X @ W_q) @ (X @ W_k).T / np.sqrt(d_k), -np.inf)
weights = np.exp(scores - scores.max(axis=1, keepdims=True))
causal = weights / weights.sum(axis=1, keepdims=True) @ (X @ W_v)
""", ""),
}


@pytest.mark.parametrize("case", ISSUE_19_CASES)
def test_the_check_catches_each_case_of_issue_19(case):
    source, answer = ISSUE_19_CASES[case]
    leaks = code_leaks(source)
    assert leaks, f"the token check misses {case}"
    assert any(answer in leak.answer for leak in leaks), (
        f"{case} is caught, but not as a copy of {answer!r}: {[str(leak) for leak in leaks]}")


def test_the_check_sees_through_other_names_and_reshapes():
    renamed = """
def step(module, h, memory, valid):
    ctx, alpha = module(h.unsqueeze(1), memory, memory, valid.unsqueeze(1))
    return ctx.squeeze(1), alpha.squeeze(1)
"""
    assert any("decoder_attention" in leak.answer for leak in code_leaks(renamed, ["02-additive-attention"]))
    # Changing which argument is repeated is another computation: names match only by a consistent renaming.
    inconsistent = "ctx, alpha = module(h, memory, valid, memory)\nreturn ctx, alpha\n"
    assert not code_leaks(inconsistent, ["02-additive-attention"]), "a different wiring was taken for the answer"


@pytest.mark.parametrize("source", [
    # Library calls that teach an idea: softmax of a temperature, the stable softmax by the library, PyTorch's own
    # attention, the cosine similarity of one query, a figure's loops.
    "for i, t in enumerate(temps):\n    ax.bar(torch.arange(5) + (i - 1) * width, torch.softmax(s / t, dim=0), width)\n",
    'print("torch.softmax =", torch.softmax(torch.tensor(s), dim=0).numpy())\n',
    "out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n",
    "cos = torch.nn.functional.cosine_similarity(q, points, dim=1)\n",
    "for i in range(len(rows)):\n    for j in range(len(cols)):\n        w = float(weights[i, j])\n",
])
def test_the_check_lets_library_calls_that_teach_pass(source):
    assert not code_leaks(source), f"a library call that teaches was taken for an answer: {code_leaks(source)}"


def test_page_code_includes_hidden_and_removed_cells():
    """The download button serves a page's source: every cell counts, whatever its tags."""
    import jupytext

    for page in BOOK_PAGES:
        read = [b.source.strip() for b in page_code(page) if b.code_cell]
        cells = [c.source.strip() for c in jupytext.read(page).cells if c.cell_type == "code"]
        assert read == cells, f"{page.name}: the check reads other code than the page's {len(cells)} code cells"
    tags = {tag for page in BOOK_PAGES for block in page_code(page) for tag in block.tags}
    assert {"remove-cell", "hide-input"} <= tags, f"hidden cells were not read: tags seen {tags}"


def test_an_answer_in_a_removed_cell_fails_the_page(tmp_path):
    """A page is read as the download button serves it: a `remove-input` cell's code counts like any other."""
    page = tmp_path / "page.md"
    page.write_text("# A page\n\nSome prose.\n\n```{code-cell} ipython3\n:tags: [remove-input]\n\n"
                    + ISSUE_19_CASES["ch3 NumPy attention in a remove-input cell (exercise 3.1)"][0]
                    + "```\n\nMore prose.\n")
    leaks = page_leaks(page)
    assert leaks, "an answer in a remove-input cell was not seen"
    assert all(7 <= leak.first_line <= leak.last_line <= 14 for leak in leaks), [str(leak) for leak in leaks]


@pytest.mark.parametrize("assignment,name", [(a, n) for a, forms in OTHER_FRAMEWORK.items() for n in forms])
def test_other_framework_forms_are_answers(assignment, name):
    """Each PyTorch form the check knows computes what the reference answer computes."""
    parameters, body = OTHER_FRAMEWORK[assignment][name]
    namespace = {"torch": torch}
    indented = "".join(f"    {line}\n" for line in body.strip().splitlines())
    exec(f"def form({', '.join(parameters)}):\n{indented}", namespace)
    reference = load_reference(assignment, skip=("training_run",))[name]
    rng = np.random.default_rng(0)
    arguments = {
        "gaussian_scores": (rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), 0.7),
        "nadaraya_watson": (rng.normal(size=6), rng.normal(size=9), rng.normal(size=9), 0.4),
        "causal_mask": (5,),
    }[name]
    as_torch = [torch.as_tensor(a) if isinstance(a, np.ndarray) else a for a in arguments]
    np.testing.assert_allclose(np.asarray(namespace["form"](*as_torch)), reference(*arguments), atol=1e-10)


@pytest.mark.parametrize("page", BOOK_PAGES, ids=lambda p: p.stem)
def test_page_shows_no_answer_in_any_form(page):
    leaks = page_leaks(page)
    assert not leaks, f"{page.name} shows answers of the exercises:\n" + "\n".join(str(leak) for leak in leaks)


# ---------------------------------------------------------------------------------------------------------------
# Chapter 5, induction and the canonical sentence
# ---------------------------------------------------------------------------------------------------------------

def ch5_values():
    """The values book/05-transformer.md glued, as the last build executed it."""
    from tests.support.claims import glued
    return glued("05-transformer")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_induction_training_curves_match_the_alt_text(book):
    """fig-induction-training's alt text: loss from about 3.3 to below 0.3 between steps 50 and 200; induction score
    from below 0.1 to above 0.9; previous-token weight from about 0.16 to about 0.5."""
    history = np.array(ch5_values()["ch5_induction_history"])  # rows: step, loss, previous, induction
    at = {int(step): row for step, *row in history}
    assert at[0][0] > 3.0 and at[50][0] > 2.0, f"the loss should start near 3.3 and still be high at step 50: {at[0][0]:.2f}, {at[50][0]:.2f}"
    assert at[200][0] < 0.3 and history[-1, 1] < 0.3, f"the loss should be below 0.3 from step 200: {at[200][0]:.2f}"
    assert at[0][2] < 0.1 and history[-1, 3] > 0.9, f"induction score {at[0][2]:.2f} -> {history[-1, 3]:.2f}, not <0.1 -> >0.9"
    assert 0.1 < at[0][1] < 0.22 and 0.4 < history[-1, 2] < 0.6, (
        f"previous-token weight {at[0][1]:.2f} -> {history[-1, 2]:.2f}, not about 0.16 -> about 0.5")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_previous_token_head_stops_by_position_not_by_block(book):
    """The prose: queries 1 to 8 follow the previous token; from position 9 on the weight is small, in the first block
    as in the repeat; induction targets are at positions 8 or before."""
    g = ch5_values()
    assert g["ch5_previous_early"] > 0.8, f"queries 1-8 put only {g['ch5_previous_early']:.2f} on the previous token"
    for name in ("ch5_previous_late_first", "ch5_previous_late_repeat"):
        assert g[name] < 0.25, f"{name} = {g[name]:.2f}: the head does not stop after position 8"
    assert abs(g["ch5_previous_late_first"] - g["ch5_previous_late_repeat"]) < 0.1, (
        "from position 9 on the previous-token weight differs between the first block and the repeat: "
        f"{g['ch5_previous_late_first']:.2f} vs {g['ch5_previous_late_repeat']:.2f}; the prose says it goes by position")
    assert g["ch5_last_target"] == 8, f"the last possible induction target is {g['ch5_last_target']}, the prose says 8"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_ablations_show_the_circuit_is_causal(book):
    """The prose and fig-induction-ablation: removing the previous-token head makes the loss about a uniform guess or
    worse, removing both layer-2 heads worse than one, in every seed; the control head leaves it low; the induction
    head alone raises it, a little."""
    g = ch5_values()
    ablation = g["ch5_ablation"]
    uniform = np.log(24)
    nothing = np.array(ablation["nothing"])
    assert len(nothing) == 3 and nothing.max() < 0.3, f"the trained models' loss is not near zero: {nothing}"
    both = np.array(ablation["both layer-2 heads"])
    assert both.min() > uniform, f"removing both layer-2 heads leaves the loss at {both}, below log 24"
    previous = np.array(ablation["previous-token head (layer 1)"])
    # The prose: "about a uniform guess or worse"; the alt text: 2.9 in one seed, 5 to 6 in the others.
    assert previous.min() > 0.85 * uniform and np.sort(previous)[1] > 5.0, (
        f"removing the previous-token head leaves the loss at {previous}: not about log 24 ({uniform:.2f}) or worse")
    control = np.array(ablation["control: other layer-1 head"])
    assert control.max() < 0.5 and np.all(control < previous / 10), (
        f"removing the control head raises the loss to {control}, not small beside the previous-token head's {previous}")
    induction = np.array(ablation["induction head (layer 2)"])
    assert np.all(induction > nothing) and induction.max() < 1.0, (
        f"removing the induction head alone gives {induction} (without: {nothing}): the prose says a modest rise")
    second_best = [sorted(scores)[0] for scores in g["ch5_layer2_scores"].values()]
    assert min(second_best) > 0.8, f"the prose says both layer-2 heads follow the induction pattern: {g['ch5_layer2_scores']}"
    assert g["ch5_ablate_previous_min"] == min(previous) and g["ch5_ablate_previous_max"] == max(previous)
    assert g["ch5_ablate_control_max"] == max(control)


@pytest.mark.book
@pytest.mark.slow
def test_ch5_induction_head_copies(book):
    """The prose: the induction head raises the logit of the token it attends to, in every model, far more than it
    moves the other logits; and the first repeated target, which induction cannot find, is predicted by a guess of
    the first token."""
    g = ch5_values()
    for seed, (on_attended, on_others) in g["ch5_copying"].items():
        assert on_attended > 0.5 and on_attended > 5 * abs(on_others), (
            f"seed {seed}: the induction head raises the attended token's logit by {on_attended:.2f} and moves the "
            f"others by {on_others:.2f}: not copying")
    assert g["ch5_copy_others_max"] < 0.2
    assert g["ch5_guess_first_share"] > 0.8, f"only {g['ch5_guess_first_share']:.0%} of new-token queries guess the first"
    assert g["ch5_first_repeat_loss"] > 5 * g["ch5_induction_targets_loss"], (
        "the first repeated target should be harder than the targets induction finds: "
        f"{g['ch5_first_repeat_loss']:.3f} vs {g['ch5_induction_targets_loss']:.3f}")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_sat_learns_to_attend_to_cat_and_mat(book):
    """The prose and fig-sat-learned: every seed learns the toy task; "sat" puts most of its weight on "cat" and "mat"
    in every seed, next to chapter 3's 0.5 and 0.5; the split varies and one seed puts nearly all on "cat"."""
    g = ch5_values()
    weights = np.array(g["ch5_sat_weights"])  # (seeds, 7): The gray cat sat on the mat
    assert weights.shape == (8, 7), f"expected 8 seeds x 7 tokens, got {weights.shape}"
    assert g["ch5_toy_accuracy_min"] > 0.95, f"a seed gets only {g['ch5_toy_accuracy_min']:.0%} of held-out sentences"
    assert g["ch5_toy_canonical_right"] == 8, "not every seed names the cat and the mat in the canonical sentence"
    on_nouns = weights[:, 2] + weights[:, 6]
    assert on_nouns.min() > 0.9 and abs(g["ch5_sat_nouns_min"] - on_nouns.min()) < 1e-3, (
        f"'sat' puts only {on_nouns.min():.2f} on cat and mat in some seed")
    assert np.delete(weights, [2, 6], axis=1).max() < 0.1, "some other token gets 0.1 or more: not 'near zero'"
    assert abs(g["ch5_designed_cat"] - 0.5) < 0.01 and abs(g["ch5_designed_mat"] - 0.5) < 0.01, "chapter 3's design"
    assert weights[:, 2].std() > 0.05 and weights[:, 2].max() > 0.9, "the split between cat and mat does not vary"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_the_quiet_seed_makes_mat_its_default(book):
    """The prose: the seed with the least weight on "mat" attends to every other place put in its stead, and names
    all six places right."""
    g = ch5_values()
    assert g["ch5_sat_mat_min"] < 0.05, f"no seed ignores 'mat': the least weight on it is {g['ch5_sat_mat_min']:.2f}"
    assert g["ch5_quiet_other_places_min"] > 0.3, (
        f"the quiet seed puts only {g['ch5_quiet_other_places_min']:.2f} on some other place: not 'mat as default'")
    assert g["ch5_quiet_named_right"] == 6, f"the quiet seed names {g['ch5_quiet_named_right']} of 6 places right"
