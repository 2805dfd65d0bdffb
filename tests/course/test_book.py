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
from tests.support.claims import glued, printed
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
# Chapters 1 and 2: the numbers the prose, the captions and the alt texts state hold on the executed pages.
# ---------------------------------------------------------------------------------------------------------------

CONTEXTS = ("attention", "summary", "none")  # chapter 2's three decoders: attention, Cho et al.'s, initial state only
SEEDS = (0, 1)


@pytest.mark.book
@pytest.mark.slow
def test_ch1_overflow_thresholds_are_the_ones_the_prose_names(book):
    """exp overflows above 709.78 in float64, 88.72 in float32 (and bfloat16, 'float32's range'), 11.09 in float16."""
    values = glued("01-weighted-sum")
    for name, stated in [("float64", 709.78), ("float32", 88.72), ("bfloat16", 88.72), ("float16", 11.09)]:
        assert round(values[f"ch1_overflow_{name}"], 2) == stated, f"{name}: {values[f'ch1_overflow_{name}']}"
    assert values["ch1_overflow_float16"] < values["ch1_overflow_float32"] < values["ch1_overflow_float64"], (
        "the prose says the limit comes sooner in lower precision")


@pytest.mark.book
@pytest.mark.slow
def test_ch1_nadaraya_watson_fits_the_interior_and_misses_at_the_boundary(book):
    """σ = 0.3 follows the curve inside (near the noise's 0.5) but misses more at x = 0; no estimate leaves the targets."""
    values = glued("01-weighted-sum")
    assert values["ch1_nw_interior_error"] < 0.75, f"interior error {values['ch1_nw_interior_error']:.2f}"
    assert values["ch1_nw_error_at_0"] > values["ch1_nw_interior_error"], (
        f"boundary bias: the error at x = 0 ({values['ch1_nw_error_at_0']:.2f}) should exceed the interior's")
    ranges = re.search(r"targets from ([\d.-]+) to ([\d.-]+); estimates from ([\d.-]+) to ([\d.-]+)",
                       printed("01-weighted-sum"))
    assert ranges, "the page no longer prints the range of the targets and of the estimates"
    low, high, est_low, est_high = map(float, ranges.groups())
    assert low <= est_low and est_high <= high, f"an estimate left the targets' range: {ranges.group(0)}"


@pytest.mark.book
@pytest.mark.slow
def test_ch1_attention_helps_the_smooth_signal_several_fold(book):
    """'cuts the error {gain}-fold' at 'a bandwidth of a few positions'; alt text: from near the noise's variance,
    0.09, several-fold down. (Calibrated over other draws: 5- to 11-fold, so the prose glues the factor.)"""
    values = glued("01-weighted-sum")
    ratio = values["ch1_smooth_no_attention"] / values["ch1_smooth_best_attention"]
    assert ratio > 3, f"the smooth signal's error falls only {ratio:.1f}-fold, not several-fold"
    assert values["ch1_smooth_gain"] == pytest.approx(ratio), "the glued factor is not the measured one"
    assert 1.5 <= values["ch1_smooth_best_bandwidth"] <= 8, f"best bandwidth {values['ch1_smooth_best_bandwidth']}"
    assert 0.06 <= values["ch1_smooth_no_attention"] <= 0.12, f"not near 0.09: {values['ch1_smooth_no_attention']}"


@pytest.mark.book
@pytest.mark.slow
def test_ch1_independent_signal_gains_about_what_shrinking_alone_gains(book):
    """The independent signal's best bandwidth is below the spacing and gains little; shrinking each item on its
    own and James-Stein do 'about the same' (alt text: from near 0.09, a slight dip below a bandwidth of 1)."""
    values = glued("01-weighted-sum")
    best, none = values["ch1_independent_best_attention"], values["ch1_independent_no_attention"]
    shrunk, james_stein = values["ch1_independent_shrunk"], values["ch1_independent_james_stein"]
    assert values["ch1_independent_best_bandwidth"] < 1, "the best bandwidth should be below the spacing of 1"
    assert values["ch1_independent_self_weight"] > 0.9, f"self weight {values['ch1_independent_self_weight']:.2f}"
    assert 0 < none - best < 0.02, f"the gain ({none:.3f} -> {best:.3f}) is not small"
    assert abs(shrunk - best) < 0.005, f"shrinking alone ({shrunk:.3f}) is not about the same as attention ({best:.3f})"
    assert abs(james_stein - shrunk) < 0.005, f"James-Stein ({james_stein:.3f}) is not about the same ({shrunk:.3f})"
    assert 0.06 <= none <= 0.12, f"the alt text says the error starts near 0.09, measured {none:.3f}"


@pytest.mark.book
@pytest.mark.slow
def test_ch2_baselines_are_larger_and_still_far_worse(book):
    """'more than three times the parameters'; their loss ends 'more than ten times higher' (alt text: attention's below
    0.05, the baselines' between 0.5 and 0.8, the summary's below the initial state's), on every seed. (Calibrated:
    attention's final loss was 0.019 to 0.032 over runs with other seeds, two threads and this machine's kernels.)"""
    values = glued("02-additive-attention")
    for context in ("summary", "none"):
        ratio = values[f"ch2_parameters_{context}"] / values["ch2_parameters_attention"]
        assert ratio > 3, f"the {context} model has {ratio:.1f} times the attention model's parameters, not more than 3"
        for seed in SEEDS:
            attention, baseline = (values[f"ch2_final_loss_{c}_{seed}"] for c in ("attention", context))
            assert attention < 0.05, f"seed {seed}: the attention model's final loss {attention:.3f}, not below 0.05"
            assert 0.5 <= baseline <= 0.8, f"seed {seed}: the {context} model's final loss {baseline:.3f}"
            assert baseline > 10 * attention, f"seed {seed}: {context}'s loss {baseline:.3f} vs attention's {attention:.3f}"
    for seed in SEEDS:
        summary, none = values[f"ch2_final_loss_summary_{seed}"], values[f"ch2_final_loss_none_{seed}"]
        assert summary < none, f"seed {seed}: the summary's final loss {summary:.3f} is not below none's {none:.3f}"


@pytest.mark.book
@pytest.mark.slow
def test_ch2_summary_at_every_step_helps_a_little_and_attention_a_lot(book):
    """Cho et al.'s decoder beats the initial-state-only one on each seed, and attention beats both by far,
    most at length 16, where the baselines stay far below attention."""
    values = glued("02-additive-attention")
    for seed in SEEDS:
        attention, summary, none = (values[f"ch2_accuracy_{c}_{seed}"] for c in CONTEXTS)
        assert none < summary, f"seed {seed}: the summary at every step ({summary:.3f}) does not beat none ({none:.3f})"
        assert summary < attention - 0.2, f"seed {seed}: attention {attention:.3f} is not far above {summary:.3f}"
        longest = {c: values[f"ch2_accuracy_{c}_{seed}_longest"] for c in CONTEXTS}
        assert longest["attention"] > 0.85, f"seed {seed}: attention at length 16: {longest['attention']:.2f}"
        assert all(0.3 <= longest[c] <= 0.5 for c in ("summary", "none")), (
            f"seed {seed}: the baselines are not 'near 0.4 at length 16': {longest}")
        for c in ("summary", "none"):
            by_length = values[f"ch2_accuracy_{c}_{seed}_by_length"]
            assert by_length[0] > 0.9 and by_length[-1] < by_length[0] - 0.3, (
                f"seed {seed}, {c}: accuracy does not fall steadily with length: {by_length}")


@pytest.mark.book
@pytest.mark.slow
def test_ch2_attention_holds_at_every_length_and_finds_the_alignment(book):
    """Alt text: with attention 'above 0.85 at every length for both seeds'; the weights form the anti-diagonal."""
    values = glued("02-additive-attention")
    for seed in SEEDS:
        by_length = values[f"ch2_accuracy_attention_{seed}_by_length"]
        assert min(by_length) > 0.85, f"seed {seed}: attention's accuracy by length {by_length}"
        assert min(by_length[:8]) > 0.95, f"seed {seed}: not 'near 1 up to about length 10': {by_length[:8]}"
    assert values["ch2_aligned"] > 0.8, f"the largest weight is on the true position for {values['ch2_aligned']:.1%}"


def test_ch2_notebook_encoder_reads_the_padding_as_its_text_says():
    """Exercise 2.4's text: the given Encoder runs its GRU over the padding, so a short sequence's encoder states
    depend on how much padding its batch has (the book's packed encoder does not: see the next test)."""
    reference = load_reference("02-additive-attention", skip=("training_run",))
    torch.manual_seed(0)
    encoder, pad = reference["Encoder"](), reference["PAD"]
    digits = torch.tensor([[3, 1, 4]])
    with torch.no_grad():
        short, _ = encoder(torch.cat([digits, torch.full((1, 2), pad)], 1))
        long, _ = encoder(torch.cat([digits, torch.full((1, 5), pad)], 1))
    difference = (short[0, :3] - long[0, :3]).abs().max().item()
    assert difference > 1e-4, f"the given Encoder's states do not depend on the padding ({difference:.1e}): fix the text"


@pytest.mark.book
@pytest.mark.slow
def test_ch2_book_model_does_not_depend_on_the_padding(book):
    """'a sequence's output does not depend on how much padding its batch needed': the printed difference is 0."""
    found = re.search(r"largest difference in the logits: ([\d.e+-]+)", printed("02-additive-attention"))
    assert found, "the page no longer prints the padding check"
    assert float(found.group(1)) < 1e-6, f"the packed model's logits depend on the padding: {found.group(1)}"


# ---------------------------------------------------------------------------------------------------------------
# Chapters 3 and 4: the claims their prose and captions make about what the pages computed.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.book
@pytest.mark.slow
def test_ch3_multihead_attention_returns_nan_or_its_bias_by_code_path(book):
    """Chapter 3: a query with no allowed key gets `nan` from MultiheadAttention's need_weights=True path and from
    its eval fast path, but the output bias (zeros through out_proj) from need_weights=False otherwise, while
    F.scaled_dot_product_attention returns zeros."""
    paths = glued("03-self-attention")["ch3_mha_paths"]
    assert paths["training, need_weights=True (default)"] == "nan", paths
    assert paths["training, need_weights=False"] == "out_proj.bias", paths
    assert paths["eval, autograd on, need_weights=False"] == "out_proj.bias", paths
    assert paths["eval under no_grad, need_weights=False (fast path)"] == "nan", paths
    assert paths["eval under no_grad, need_weights=True (fast path)"] == "nan", paths
    assert "output of the last query: [0.0, 0.0, 0.0, 0.0]" in printed("03-self-attention"), \
        "F.scaled_dot_product_attention no longer returns zeros for a query with no allowed key"


@pytest.mark.book
@pytest.mark.slow
def test_ch3_encoding_dot_product_is_even_in_the_offset_and_the_rotation_is_not(book):
    """Chapter 3: PE_p PE_(p+delta)^T is the same for delta and -delta; (PE_p R_-1) PE_(p+delta)^T peaks at -1."""
    values = glued("03-self-attention")
    assert values["ch3_pe_even_gap"] < 1e-9, f"PE dot product not even in the offset: {values['ch3_pe_even_gap']}"
    plain, rotated = values["ch3_pe_plain"], values["ch3_pe_rotated"]
    assert abs(plain[-1] - plain[1]) < 1e-9, plain
    assert max(rotated, key=rotated.get) == -1, f"the rotated query does not pick the previous position: {rotated}"
    assert values["ch3_pe_rotated_prev"] - values["ch3_pe_rotated_next"] > 1, \
        "the text says the rotated query tells the previous position from the next; the scores are too close"


@pytest.mark.book
@pytest.mark.slow
def test_ch3_scaling_claims_hold_on_the_measurement(book):
    """Chapter 3: at d_k = 64 unscaled softmax is nearly one-hot; fig-scaling's caption and alt text: the largest
    weight rises from below 0.5 to above 0.95 and the gradient falls several-fold (from near 0.3 to below 0.05)
    without the scale, both stay put with it. (Calibrated over other draws: 0.41-0.45 to 0.97, 7- to 10-fold.)"""
    values = glued("03-self-attention")
    assert values["ch3_unscaled_max_at_64"] > 0.8, values["ch3_unscaled_max_at_64"]
    results = values["ch3_scaling_results"]
    unscaled, scaled = results["unscaled"], results["scaled by 1/√d_k"]
    assert unscaled["max_weight"][0] < 0.5 and unscaled["max_weight"][-1] > 0.95, unscaled
    assert 0.2 < unscaled["grad_norm"][0] < 0.4 and unscaled["grad_norm"][-1] < 0.05, unscaled
    assert unscaled["grad_norm"][0] / unscaled["grad_norm"][-1] > 4, "not 'several-fold'"
    assert max(scaled["max_weight"]) - min(scaled["max_weight"]) < 0.05, scaled
    assert max(scaled["grad_norm"]) / min(scaled["grad_norm"]) < 1.1, scaled


@pytest.mark.book
@pytest.mark.slow
def test_ch3_sqrt_d_model_suits_variance_1_over_d_model_not_nn_embedding(book):
    """Chapter 3: embeddings of variance 1/d_model have length about 1 and the factor brings them to the
    encodings' scale; nn.Embedding's N(0, 1) rows times sqrt(d_model) reach d_model and drown the encodings."""
    lengths = glued("03-self-attention")["ch3_lengths"]
    encoding = lengths["encoding"]
    assert abs(lengths["embedding, variance 1/d_model"] - 1) < 0.05, lengths
    assert 0.5 < lengths["the same times sqrt(d_model)"] / encoding < 2, lengths
    assert abs(lengths["nn.Embedding times sqrt(d_model)"] / 512 - 1) < 0.05, lengths
    assert lengths["nn.Embedding times sqrt(d_model)"] > 20 * encoding, lengths


@pytest.mark.book
@pytest.mark.slow
def test_ch3_positional_head_is_as_the_caption_says(book):
    """Chapter 3, fig-heads: from 'cat' on each token puts 0.95 or more on the one before; 'gray' puts 0.64 on
    'The' and 0.34 on 'mat'; 'The' attends to position 5; the weight ratio in the prose is e^(score gap)."""
    values = glued("03-self-attention")
    weights = np.array(values["ch3_head1_weights"])
    assert all(weights[i, i - 1] >= 0.95 for i in range(2, 7)), weights.round(2)
    assert round(weights[1, 0], 2) == 0.64 and round(weights[1, 6], 2) == 0.34, weights[1].round(2)
    assert weights[0].argmax() == 5, weights[0].round(2)
    assert values["ch3_pe_self_match"] == pytest.approx(3.0)
    assert values["ch3_pe_weight_ratio"] == pytest.approx(np.exp(values["ch3_pe_score_gap"]))


@pytest.mark.book
@pytest.mark.slow
def test_ch4_full_attention_memory_claims(book):
    """Chapter 4: the peak is about three score matrices; fig-full-cost: 1 GiB fits about 44,000 keys, a million
    keys need over 20 GiB, and m = n = 10^6 over 20 TiB."""
    values = glued("04-long-sequences")
    assert 2.5 < values["ch4_peak_over_scores"] < 3.5, values["ch4_peak_over_scores"]
    assert 40_000 < values["ch4_keys_in_1gib"] < 48_000, values["ch4_keys_in_1gib"]
    assert values["ch4_extrapolated_gib"] > 20
    assert values["ch4_extrapolated_gib"] * 1e6 / 1024 / 1024 > 20, "m = n = 10^6 no longer needs over 20 TiB"


@pytest.mark.book
@pytest.mark.slow
def test_ch4_streaming_memory_grows_with_the_chunk_not_with_n(book):
    """Chapter 4, fig-chunks: the peak beyond the inputs grows with the chunk size, like m x chunk, and stays far
    below the 7.6 GiB of the full score matrix."""
    cost = glued("04-long-sequences")["ch4_stream_cost"]
    chunks = sorted(cost)
    peaks = [cost[c]["peak_mib"] for c in chunks]
    assert all(later > 3 * earlier for earlier, later in zip(peaks, peaks[1:])), peaks
    for c in chunks:
        block = 1024 * c * 8 / 2**20
        assert block <= cost[c]["peak_mib"] < 6 * block, (c, cost[c], block)
    assert max(peaks) < 7.6 * 1024 / 10


@pytest.mark.book
@pytest.mark.slow
def test_ch4_the_cache_outgrows_the_weights_only_beyond_the_crossover(book):
    """Chapter 4: with 32 key-value heads the cache outgrows the weights beyond about 25,000 cached tokens (so a
    batch of eight 4096-token sequences passes it); grouped-query attention with 8 pushes it several times
    further."""
    crossover = glued("04-long-sequences")["ch4_cache_crossover"]
    assert 20_000 < crossover[32] < 30_000, crossover
    assert 8 * 4096 > crossover[32], "the batch example no longer passes the crossover"
    assert crossover[8] > 3 * crossover[32] and crossover[1] > crossover[8], crossover


# ---------------------------------------------------------------------------------------------------------------
# Chapter 5, encoder-decoder: the claims of "Encoder, decoder and cross-attention" and "Reversal, with
# cross-attention" hold on the values the executed page glued.
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.book
@pytest.mark.slow
def test_ch5_target_padding_mask_matters_only_off_the_right(book):
    """With right padding the causal mask already hides the padded keys; with left padding it does not; the
    source padding mask is always needed."""
    values = glued("05-transformer")
    change = values["ch5_mask_change"]
    assert values["ch5_target_mask_idle"] is True, (
        "with right padding the decoder's outputs at real positions are not identical with and without the "
        "target padding mask, as the page says")
    for run in ("every mask, target padded right", "every mask, target padded left",
                "no target padding mask, padded right"):
        assert change[run] < 1e-5, f"'{run}': the real outputs differ from the unpadded run by {change[run]:.2e}"
    for run in ("no target padding mask, padded left", "no source padding mask"):
        assert change[run] > 0.1, f"'{run}': dropping the mask moves the real outputs by only {change[run]:.2e}"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_fully_masked_query_gives_nan_in_eval_only_and_it_spreads(book):
    """The page says: zeros in training mode, nan in eval mode under no_grad, and two layers spread it to every
    position."""
    nan_rows = glued("05-transformer")["ch5_nan_rows"]
    for run in ("train, 1 layer", "train, 2 layers"):
        assert not any(nan_rows[run]), f"{run}: nan at {nan_rows[run]}"
    assert nan_rows["eval, 1 layer"] == [True, True, False, False, False], (
        f"eval mode, after one layer, nan should be at the two padded positions only: {nan_rows['eval, 1 layer']}")
    assert all(nan_rows["eval, 2 layers"]), f"eval mode, two layers: not every position is nan: {nan_rows}"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_reversal_parameter_counts(book):
    """The counts the page prints: the transformer's 44,172 (issue 20's count), chapter 2's model's 26,124."""
    values = glued("05-transformer")
    assert values["ch5_parameters_transformer"] == 44_172, values["ch5_parameters_transformer"]
    assert values["ch5_parameters_gru"] == 26_124, values["ch5_parameters_gru"]


@pytest.mark.book
@pytest.mark.slow
def test_ch5_both_reversal_models_reverse_nearly_all_digits(book):
    """The prose gives each model's accuracy per seed and ranks neither (calibrated: over runs with other seeds and
    CPU kernels the transformer was ahead overall in most runs and behind in one, 0.949 against 0.986): the two do
    "about as well", within 0.05 of each other seed by seed, each reversing nearly all digits."""
    values = glued("05-transformer")
    for seed in (0, 1):
        for model in ("transformer", "gru"):
            overall, at_16 = (values[f"ch5_reversal_accuracy{k}_{model}_{seed}"] for k in ("", "16"))
            assert overall > 0.9, f"seed {seed}: the {model} model reverses only {overall:.3f} of the digits"
            assert at_16 > 0.9, f"seed {seed}: the {model} model gets only {at_16:.3f} at length 16"
        transformer, gru = (values[f"ch5_reversal_accuracy_{model}_{seed}"] for model in ("transformer", "gru"))
        assert abs(transformer - gru) < 0.05, f"seed {seed}: transformer {transformer:.3f}, GRU {gru:.3f}: not about even"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_cross_attention_layer_2_aligns_layer_1_reads_the_length(book):
    """Layer 2's heads several times chance on the copied position, layer 1's near chance and mostly on the last
    source digit, and the length readable from the decoder's stream after layer 1's cross-attention only."""
    values = glued("05-transformer")
    chance, hits, on_last = values["ch5_hit_chance"], values["ch5_hits"], values["ch5_on_last"]
    for seed in (0, 1):
        layer_1, layer_2 = hits[f"{seed},0"], hits[f"{seed},1"]
        assert min(layer_2) > 3 * chance, f"seed {seed}: layer 2's hits {layer_2}, chance {chance:.3f}"
        assert max(layer_1) < 2 * chance, f"seed {seed}: layer 1's hits {layer_1} are not near chance {chance:.3f}"
        assert all(last > hit for last, hit in zip(on_last[f"{seed},0"], layer_1)) and min(on_last[f"{seed},0"]) > 0.3, (
            f"seed {seed}: layer 1's largest weight is not mostly on the last digit: {on_last[f'{seed},0']}")
    read = values["ch5_length_read"]
    for seed in (0, 1):
        assert read[f"{seed},before"] < 0.5 < 0.8 < read[f"{seed},after"], f"seed {seed}: R^2 of L {read}"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_cached_generation_gives_the_same_digits(book):
    values = glued("05-transformer")
    assert set(values["ch5_cache_differing"].values()) == {0}, values["ch5_cache_differing"]
    # The speed-up is glued into the prose as measured; tests do not assert timings.


@pytest.mark.book
@pytest.mark.slow
def test_ch5_reversal_figure_both_near_1_when_short_and_close_at_every_length(book):
    """fig-reversal-accuracy's alt text (means of the two seeds): both near 1 at lengths 3-5, above 0.9 at every
    length; the two lines within a tenth of each other (calibrated: 0.03 to 0.07 apart at most)."""
    by_length = glued("05-transformer")["ch5_reversal_by_length"]
    gap = np.array(by_length["transformer"]) - np.array(by_length["gru"])  # lengths 3 .. 16
    assert min(by_length["gru"][:3] + by_length["transformer"][:3]) > 0.97, f"not near 1 at lengths 3-5: {by_length}"
    for model, accuracy in by_length.items():
        assert min(accuracy) > 0.9, f"the {model} model is not above 0.9 at every length: {accuracy}"
    assert np.abs(gap).max() < 0.1, f"the two lines are not within a tenth: gaps {gap.round(3)}"


# ---------------------------------------------------------------------------------------------------------------
# Chapter 5, induction and the canonical sentence
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.book
@pytest.mark.slow
def test_ch5_induction_training_curves_match_the_alt_text(book):
    """fig-induction-training's alt text: loss from about 3.3 to below 0.5 between steps 50 and 250, below 0.3 at the
    end; induction score from below 0.1 to above 0.7; previous-token weight from about 0.16 to about 0.4 or 0.5.
    (Calibrated: one run in seven, with other seeds, trained a model with induction score 0.74 and previous-token
    weight 0.38; the others 0.96-0.99 and 0.52-0.54.)"""
    history = np.array(glued("05-transformer")["ch5_induction_history"])  # rows: step, loss, previous, induction
    at = {int(step): row for step, *row in history}
    assert at[0][0] > 3.0 and at[50][0] > 2.0, f"the loss should start near 3.3 and still be high at step 50: {at[0][0]:.2f}, {at[50][0]:.2f}"
    assert at[250][0] < 0.5, f"the loss should be below 0.5 from step 250: {at[250][0]:.2f}"
    assert history[-1, 1] < 0.3, f"the loss should end below 0.3: {history[-1, 1]:.2f}"
    assert at[0][2] < 0.1 and history[-1, 3] > 0.7, f"induction score {at[0][2]:.2f} -> {history[-1, 3]:.2f}, not <0.1 -> >0.7"
    assert 0.1 < at[0][1] < 0.22 and 0.33 < history[-1, 2] < 0.6, (
        f"previous-token weight {at[0][1]:.2f} -> {history[-1, 2]:.2f}, not about 0.16 -> about 0.4 or 0.5")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_previous_token_head_stops_by_position_not_by_block(book):
    """The prose: queries 1 to 8 follow the previous token; from position 9 on the weight is small, in the first block
    as in the repeat; induction targets are at positions 8 or before."""
    g = glued("05-transformer")
    # "most of their weight" (calibrated: 0.69 to 0.95 over runs with other seeds and kernels)
    assert g["ch5_previous_early"] > 0.6, f"queries 1-8 put only {g['ch5_previous_early']:.2f} on the previous token"
    for name in ("ch5_previous_late_first", "ch5_previous_late_repeat"):
        assert g[name] < 0.25, f"{name} = {g[name]:.2f}: the head does not stop after position 8"
    assert abs(g["ch5_previous_late_first"] - g["ch5_previous_late_repeat"]) < 0.1, (
        "from position 9 on the previous-token weight differs between the first block and the repeat: "
        f"{g['ch5_previous_late_first']:.2f} vs {g['ch5_previous_late_repeat']:.2f}; the prose says it goes by position")
    assert g["ch5_last_target"] == 8, f"the last possible induction target is {g['ch5_last_target']}, the prose says 8"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_ablations_show_the_circuit_is_causal(book):
    """The prose and fig-induction-ablation: removing the previous-token head makes the loss most of the way to a
    uniform guess or worse, removing both layer-2 heads worse than one, in every seed; the control head costs less
    than the previous-token head; the induction head alone raises it, a little."""
    g = glued("05-transformer")
    ablation = g["ch5_ablation"]
    uniform = np.log(24)
    nothing = np.array(ablation["nothing"])
    assert len(nothing) == 3 and nothing.max() < 0.3, f"the trained models' loss is not near zero: {nothing}"
    both = np.array(ablation["both layer-2 heads"])
    assert both.min() > uniform, f"removing both layer-2 heads leaves the loss at {both}, below log 24"
    previous = np.array(ablation["previous-token head (layer 1)"])
    # The prose ("most of the way to a uniform guess") and the alt text ("well over half ... in every seed, above it
    # in some")
    # (calibrated: the least over runs with other seeds and kernels was 2.07, 0.65 ln 24).
    assert previous.min() > 0.6 * uniform and previous.max() > uniform, (
        f"removing the previous-token head leaves the loss at {previous}: not two thirds of log 24 ({uniform:.2f}) "
        "in every seed and above it in some")
    control = np.array(ablation["control: other layer-1 head"])
    # "in each model less than removing its previous-token head" (calibrated: in one run with other seeds a model
    # split the previous-token work over both layer-1 heads, and removing the control cost 3.5 against 6.4)
    assert np.all(control < previous), (
        f"removing the control head raises the loss to {control}, not less than the previous-token head's {previous}")
    induction = np.array(ablation["induction head (layer 2)"])
    assert np.all(induction > nothing) and induction.max() < 1.0, (
        f"removing the induction head alone gives {induction} (without: {nothing}): the prose says a modest rise")
    # "both layer-2 heads follow the induction pattern (their induction scores are close)"; calibrated: the lower of
    # the two was 0.66 to 0.99 over runs with other seeds and kernels, at most 0.1 below the other
    scores = np.array(list(g["ch5_layer2_scores"].values()))  # (models, 2 heads)
    assert scores.min() > 0.6 and np.abs(scores[:, 0] - scores[:, 1]).max() < 0.15, (
        f"the prose says both layer-2 heads follow the induction pattern: {g['ch5_layer2_scores']}")
    assert g["ch5_ablate_previous_min"] == min(previous) and g["ch5_ablate_previous_max"] == max(previous)
    assert g["ch5_ablate_control_max"] == max(control)


@pytest.mark.book
@pytest.mark.slow
def test_ch5_induction_head_copies(book):
    """The prose: the induction head raises the logit of the token it attends to, in every model, far more than it
    moves the other logits; and the first repeated target, which induction cannot find, is predicted by a guess of
    the first token."""
    g = glued("05-transformer")
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
    in every seed, next to chapter 3's 0.5 and 0.5; the split varies from seed to seed."""
    g = glued("05-transformer")
    weights = np.array(g["ch5_sat_weights"])  # (seeds, 7): The gray cat sat on the mat
    assert weights.shape == (8, 7), f"expected 8 seeds x 7 tokens, got {weights.shape}"
    assert g["ch5_toy_accuracy_min"] > 0.95, f"a seed gets only {g['ch5_toy_accuracy_min']:.0%} of held-out sentences"
    assert g["ch5_toy_canonical_right"] == 8, "not every seed names the cat and the mat in the canonical sentence"
    on_nouns = weights[:, 2] + weights[:, 6]
    assert on_nouns.min() > 0.8 and abs(g["ch5_sat_nouns_min"] - on_nouns.min()) < 1e-3, (
        f"'sat' puts only {on_nouns.min():.2f} on cat and mat in some seed")
    assert np.delete(weights, [2, 6], axis=1).max() < 0.1, "some other token gets 0.1 or more: not 'near zero'"
    assert abs(g["ch5_designed_cat"] - 0.5) < 0.01 and abs(g["ch5_designed_mat"] - 0.5) < 0.01, "chapter 3's design"
    assert weights[:, 2].std() > 0.05, "the split between cat and mat does not vary"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_the_quiet_seed_reads_the_other_places(book):
    """The prose: the seed with the least weight on "mat" still names it, attends to every other place put in its
    stead, and names all six places right. (It once said that seed made "mat" its default, ignoring it: calibrated,
    the least weight on "mat" over 8 seeds ranged from 0.01 to 0.43 between runs, so that is not claimed.)"""
    g = glued("05-transformer")
    least = min(row[6] for row in g["ch5_sat_weights"])  # position 6: "mat"
    assert abs(g["ch5_sat_mat_min"] - least) < 1e-3, f"the quiet seed puts {g['ch5_sat_mat_min']}, not the least, {least}"
    assert g["ch5_quiet_other_places_min"] > 0.2, (
        f"the quiet seed puts only {g['ch5_quiet_other_places_min']:.2f} on some other place")
    assert g["ch5_quiet_named_right"] == 6, f"the quiet seed names {g['ch5_quiet_named_right']} of 6 places right"


# ---------------------------------------------------------------------------------------------------------------
# Chapter 5, when not and positions: the claims of "When not to use attention" and "Positions revisited".
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.book
@pytest.mark.slow
def test_ch5_relational_heads_put_more_than_uniform_weight_on_copies_and_more_with_more_copies(book):
    """'Both heads of the relational model put more there [than uniform attention], and more the more copies there
    are.' (The independent model's heads are claimed to be nothing in particular: in calibration runs with other
    seeds they put from 0.03 to 0.43 on copies, so no test pins them.)"""
    ch5_values = glued("05-transformer")
    uniform = ch5_values["ch5_copy_share_uniform"]
    for task in ("relational",):
        for head in (0, 1):
            share = ch5_values[f"ch5_copy_share_{task}_{head}"]
            assert share > uniform, f"the {task} model's head {head} puts {share:.2f} on copies, uniform {uniform:.2f}"
        for head, by_count in enumerate(ch5_values[f"ch5_copy_share_by_count_{task}"]):
            # 1 to 5 copies; 6 copies of one token in 16 are rare, and their mean moves with the draw
            assert all(a < b for a, b in zip(by_count[:5], by_count[1:5])) and by_count[5] > by_count[2], (
                f"the {task} model's head {head}: its share on copies does not rise with their number: {by_count}")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_interventions_change_only_the_relational_model(book):
    """Removing attention leaves the independent model's accuracy; it takes the relational model (and uniform
    weights too) below always answering the most common count."""
    ch5_values = glued("05-transformer")
    majority = ch5_values["ch5_when_not_majority"]
    assert ch5_values["ch5_when_not_independent"] > 0.99, "the transformer should do the independent task"
    assert ch5_values["ch5_when_not_independent_ablated"] >= ch5_values["ch5_when_not_independent"] - 0.005, (
        "removing attention changed the independent model's accuracy, which the prose says it leaves")
    assert ch5_values["ch5_when_not_relational"] > majority + 0.5, "the transformer should do the relational task"
    for kind in ("ablated", "uniform"):
        value = ch5_values[f"ch5_when_not_relational_{kind}"]
        assert value < majority, f"the relational model {kind}: {value:.3f}, not below the majority {majority:.3f}"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_rope_scores_are_constant_along_diagonals_and_added_sinusoids_are_not(book):
    """'Along a diagonal the RoPE scores differ by rounding error; with added sinusoids by most of the map's range.'"""
    ch5_values = glued("05-transformer")
    assert ch5_values["ch5_rope_spread"] < 1e-10, f"RoPE's spread along a diagonal: {ch5_values['ch5_rope_spread']}"
    spread, whole = ch5_values["ch5_added_spread"], ch5_values["ch5_added_range"]
    assert spread > 0.5 * whole, f"added sinusoids: spread {spread:.2f} along a diagonal, range {whole:.2f}"


# ---------------------------------------------------------------------------------------------------------------
# Chapter 5, the block: the claims of "From attention layer to block" hold on the values the page measured.
# ---------------------------------------------------------------------------------------------------------------
CH5 = "05-transformer"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_one_position_gradient_is_flat_in_post_norm_and_falls_like_inverse_sqrt_depth_in_pre_norm(book):
    values = glued(CH5)
    post, pre, slope = values["ch5_post_position_ratio"], values["ch5_pre_position_ratio"], values["ch5_pre_position_slope"]
    assert 0.8 <= post <= 1.25, f"post-norm's per-position gradient changes by a factor {post:.2f} from 2 to 32 blocks: not flat"
    assert pre < 0.5, f"pre-norm's per-position gradient falls only by a factor {pre:.2f} from 2 to 32 blocks"
    assert -0.7 <= slope <= -0.3, f"pre-norm's log-log slope is {slope:.2f}, not near the -0.5 of 1/sqrt(L)"
    assert values["ch5_init_seeds"] >= 12, "the figure promises 12 initialisations"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_post_norm_mean_gradient_rises_while_its_tokens_become_parallel(book):
    values = glued(CH5)
    for name in ("ch5_post_mean_ratio", "ch5_post_default_mean_ratio"):
        assert values[name] > 1.2, f"{name} = {values[name]:.2f}: the mean loss's gradient does not rise with depth"
    assert 0.8 <= values["ch5_post_default_position_ratio"] <= 1.25, (
        f"with the default init, one position's post-norm gradient changes by {values['ch5_post_default_position_ratio']:.2f}")
    assert values["ch5_cosine_shallow"] < 0.2, f"tokens after 2 blocks have cosine {values['ch5_cosine_shallow']:.2f}"
    for name in ("ch5_cosine_post_default", "ch5_cosine_post_xavier"):
        assert values[name] > 0.9, f"{name} = {values[name]:.2f}: the tokens of a deep post-norm stack are not nearly parallel"
    assert values["ch5_cosine_pre_default"] < values["ch5_cosine_post_default"] - 0.1, "pre-norm's tokens collapse as much"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_post_norm_needs_warm_up_at_a_large_learning_rate_and_pre_norm_does_not(book):
    values = glued(CH5)
    cold, warm = values["ch5_accuracy_post_cold"], values["ch5_accuracy_post_warm"]
    assert len(cold) == values["ch5_train_seeds"] >= 3, "the text promises a few seeds"
    # "does not reliably learn ... the worst about the 1/16 of guessing" (calibrated: a seed learns on some runs)
    assert min(cold) < 0.15, f"post-norm without warm-up gets {cold} right: no seed is about the 1/16 of guessing"
    assert min(warm) > 0.9, f"post-norm with warm-up gets only {warm} right"
    assert values["ch5_min_accuracy_post_cold"] == min(cold) and values["ch5_max_accuracy_post_cold"] == max(cold)
    assert values["ch5_min_accuracy_post_warm"] == min(warm)
    for name in ("ch5_accuracy_pre_cold", "ch5_accuracy_pre_warm"):
        assert min(values[name]) > 0.9, f"{name} = {values[name]}: pre-norm does not learn the task"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_gpt2_scaling_keeps_the_stream_the_same_size_at_any_depth(book):
    values = glued(CH5)
    plain, scaled, shallow = (values[f"ch5_stream_{k}"] for k in ("plain_deep", "scaled_deep", "scaled_shallow"))
    assert plain > 4, f"without the scaling, the stream grows only {plain:.2f} times over {values['ch5_stream_deepest']} blocks"
    assert abs(scaled - shallow) < 0.05 * shallow, f"with the scaling the stream ends {scaled:.2f} vs {shallow:.2f} times as long"
    assert scaled < 1.5, f"with the scaling the stream still grows {scaled:.2f} times"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_tying_with_default_embeddings_gives_huge_logits_at_init(book):
    values = glued(CH5)
    log_v = values["ch5_log_vocab"]
    assert values["ch5_tied_logit_std"] > 5 * values["ch5_untied_logit_std"], "tied logits are not much larger"
    assert values["ch5_tied_loss"] > 3 * log_v, f"the tied model's initial loss {values['ch5_tied_loss']:.1f} is not huge"
    assert values["ch5_tied_own"] > 80, f"only {values['ch5_tied_own']:.0f}% of positions predict their own input token"
    for name in ("ch5_untied_loss", "ch5_small_tied_loss"):
        assert abs(values[name] - log_v) < 0.3, f"{name} = {values[name]:.2f} is not about ln V = {log_v:.2f}"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_schedule_peak_and_modern_block_size(book):
    values = glued(CH5)
    assert values["ch5_vaswani_peak"] == pytest.approx((512 * 4000) ** -0.5), "eq. 3's peak is not (d_model warmup)^-1/2"
    old, new = values["ch5_params_2017"], values["ch5_params_modern"]
    assert old == 12 * 512 ** 2 + 13 * 512, f"the 2017 block has {old} parameters, not 12 d² + 13 d"
    assert abs(new - old) < 0.01 * old, f"the modern block ({new:,}) does not cost what the 2017 one ({old:,}) does"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_pre_norm_without_warm_up_learns_sooner(book):
    values = glued(CH5)
    cold, warm, post = (values[f"ch5_median_learned_step_{k}"] for k in ("pre_cold", "pre_warm", "post_warm"))
    assert cold < warm, f"pre-norm without warm-up learns at step {cold}, not sooner than with it ({warm})"
    assert cold < post, f"pre-norm without warm-up learns at step {cold}, not sooner than post-norm with it ({post})"
    never = values["ch5_learned_step_post_cold"]
    assert None in never, f"post-norm without warm-up learns in every seed, at steps {never}"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_quadratic_term_dominates_the_block_at_the_longest_length(book):
    """Going further, the block's time: by the formula, at n = 2048 and d_model = 64 the n^2 term is most of the
    multiply-adds (2n / (12 d_model + 2n), about 84%); the prose says the scores and weighted sum dominate."""
    share = glued(CH5)["ch5_cost_quadratic_share"]
    assert share == pytest.approx(2 * 2048 / (12 * 64 + 2 * 2048)), f"the glued n^2 share {share} is not the formula's"
    assert share > 0.5, f"the n^2 term is only {share:.0%} of the multiply-adds: it does not dominate"


# ---------------------------------------------------------------------------------------------------------------
# Chapter 5 compares the transformer with "chapter 2's own model": the copy on its page must be that model.
# ---------------------------------------------------------------------------------------------------------------
def page_class(page, name):
    """The source of `class name` as a code cell of book/<page>.md defines it (up to the next top-level line)."""
    text = (REPO / "book" / f"{page}.md").read_text(encoding="utf-8")
    found = re.search(rf"^class {name}\(.*?(?=^\S|^```)", text, flags=re.M | re.S)
    assert found, f"book/{page}.md defines no class {name}"
    return found.group(0)


def test_chapter_5s_copy_of_chapter_2s_model_computes_what_chapter_2s_model_computes():
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        chapter_2 = load_reference("02-additive-attention", skip=("training_run",))
    names = {"nn": torch.nn, "torch": torch, "AdditiveAttention": chapter_2["AdditiveAttention"],
             "decoder_attention": chapter_2["decoder_attention"], "PAD": 10, "BOS": 11, "VOCAB": 12, "DIGITS": 12}
    exec(page_class("02-additive-attention", "Seq2Seq"), names)
    exec(page_class("05-transformer", "Chapter2Model"), names)
    torch.manual_seed(0)
    original = names["Seq2Seq"]("attention")
    torch.manual_seed(0)
    copy = names["Chapter2Model"]()
    source = torch.tensor([[3, 1, 4, 1, 5, 10, 10], [9, 2, 6, 5, 3, 5, 8]])
    inputs = torch.tensor([[11, 5, 1, 4, 1, 3, 10], [11, 8, 5, 3, 5, 6, 2]])
    with torch.no_grad():
        expected, copied = original(source, inputs)[0], copy(source, inputs)
        assert torch.equal(expected, copied), "chapter 5's Chapter2Model no longer computes chapter 2's Seq2Seq"
        assert torch.equal(original.generate(source)[0], copy.generate(source)), "the two generate differently"


# ---------------------------------------------------------------------------------------------------------------
# Chapter 6: the claims of the prose, the captions and the alt texts hold on the values the page measured.
# ---------------------------------------------------------------------------------------------------------------
CH6 = "06-beyond-text"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_numbers_written_into_captions_and_alt_texts_are_the_measured_ones(book):
    """Captions and alt texts cannot glue: their seeds, steps, image counts and matrix sizes must match the code's."""
    g = glued(CH6)
    assert g["ch6_seeds"] == 3 and g["ch6_vit_seeds"] == 3, "fig-data-size and fig-sets say 3 seeds"
    assert g["ch6_train_size"] == 1437, "fig-data-size's alt text says all 1,437 training images"
    assert g["ch6_fit_steps"] == 150 and g["ch6_set_steps"] == 200, "the captions say 150 and 200 steps"
    assert g["ch6_rollout_size"] == "17 × 17", f"rollout's matrices are {g['ch6_rollout_size']}, not (N+1)^2 = 17^2"
    assert g["ch6_labelled"] == 40 and g["ch6_unlabelled"] == 160, "4 blocks of 50 with 10 labelled per block"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_symmetries_hold_to_float32_rounding(book):
    """'All differences are float32 rounding': equivariance, invariance, and a set twice pooling as the set."""
    g = glued(CH6)
    for name in ("ch6_equivariance", "ch6_invariance", "ch6_pooled_twice"):
        assert g[name] < 1e-5, f"{name} = {g[name]:.1e}: not float32 rounding"
    assert g["ch6_gat_outside"] == 0, "the GAT layer puts weight outside the neighbourhoods"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_the_cnn_beats_the_vit_at_every_size_and_most_with_little_data(book):
    """fig-data-size's alt text: the CNN's line lies above the ViT's at every size, the gap largest at 100 images."""
    g = glued(CH6)
    gaps = {}
    for size in ("100", "300", "all"):
        cnn, vit = np.mean(g[f"ch6_size_runs_cnn_{size}"]), np.mean(g[f"ch6_size_runs_vit_{size}"])
        assert cnn > vit, f"on {size} images the CNN gets {cnn:.3f} and the ViT {vit:.3f}"
        gaps[size] = cnn - vit
    assert gaps["100"] == max(gaps.values()), f"the gap is not largest at 100 images: {gaps}"
    assert abs(g["ch6_parameters_cnn"] - g["ch6_parameters_vit4"]) < 0.1 * g["ch6_parameters_vit4"], (
        "the CNN and the ViT no longer have about the same number of parameters")


@pytest.mark.book
@pytest.mark.slow
def test_ch6_locality_buys_only_what_the_cnn_gains_over_the_mlp(book):
    """The MLP control of fig-data-size: the CNN above the MLP at every size, the MLP above the ViT at 100 and 300
    images and nearer to it with all of them than at 100; at 100 images the CNN's gain over the MLP (locality) is smaller than
    the MLP's lead over the ViT; each learning rate is the one the validation split chose."""
    g = glued(CH6)
    mean = {(name, size): np.mean(g[f"ch6_size_runs_{name}_{size}"])
            for name in ("cnn", "mlp", "vit") for size in ("100", "300", "all")}
    for size in ("100", "300", "all"):
        assert mean["cnn", size] > mean["mlp", size], f"on {size} images the MLP is not below the CNN: {mean}"
    for size in ("100", "300"):
        assert mean["mlp", size] > mean["vit", size], f"on {size} images the MLP is not above the ViT: {mean}"
    assert g["ch6_mlp_vit_gap_all"] == pytest.approx(100 * abs(mean["mlp", "all"] - mean["vit", "all"]))
    assert g["ch6_mlp_vit_gap_all"] < g["ch6_mlp_lead_100"], f"the MLP-ViT gap does not shrink with all images: {mean}"
    gain, lead = g["ch6_locality_gain_100"], g["ch6_mlp_lead_100"]
    assert gain == pytest.approx(100 * (mean["cnn", "100"] - mean["mlp", "100"]))
    assert lead == pytest.approx(100 * (mean["mlp", "100"] - mean["vit", "100"]))
    assert 0 < gain < lead, f"at 100 images the CNN gains {gain:.1f} points over the MLP, the MLP leads by {lead:.1f}"
    assert abs(g["ch6_parameters_mlp"] - g["ch6_parameters_vit4"]) < 0.1 * g["ch6_parameters_vit4"], (
        "the MLP and the ViT no longer have about the same number of parameters")
    rates = g["ch6_learning_rates"].split(", ")
    assert len(rates) == 4 and g["ch6_validation_size"] == 287 and g["ch6_tuning_seeds"] == 2
    for name in ("CNN", "MLP", "ViT"):
        best = max(rates, key=lambda lr: g["ch6_tuning"][f"{name} {lr}"])
        assert g[f"ch6_lr_{name.lower()}"] == best, f"{name}: the prose's rate is not the validation split's choice"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_class_token_and_mean_differ_by_less_than_their_spread(book):
    """'The two differ by less than their spread over the seeds'; and the ViT with 4x4 patches does no worse than
    the one with 2x2 patches."""
    g = glued(CH6)
    cls, mean = (np.array(g["ch6_pool_accuracy"][k]) for k in ("class token", "mean of the patches"))
    assert abs(cls.mean() - mean.mean()) < max(cls.std(ddof=1), mean.std(ddof=1)), f"class token {cls}, mean {mean}"
    assert cls.mean() >= np.mean(g["ch6_vit_accuracy"]), (
        f"the 4x4-patch ViT ({cls.mean():.3f}) does worse than the 2x2-patch one ({np.mean(g['ch6_vit_accuracy']):.3f})")


@pytest.mark.book
@pytest.mark.slow
def test_ch6_positions_did_not_learn_the_grid_and_opposite_corners_are_most_alike(book):
    g = glued(CH6)
    by_distance = np.array(g["ch6_similarity_by_distance"]).mean(0)  # distances 1..6, mean over seeds
    assert g["ch6_similarity_neighbours"] < g["ch6_similarity_far"], "neighbours are more alike than far patches"
    assert g["ch6_similarity_opposite_corners"] > by_distance[:5].max(), (
        f"opposite corners ({g['ch6_similarity_opposite_corners']:.2f}) are not the most similar: {by_distance}")
    assert g["ch6_ink_corners"] < g["ch6_ink_other"], "the corners hold ink more often than the other patches"
    # fig-positions (seed 0): no smooth fall-off. (It also said that in each corner tile the opposite corner is among
    # the lightest cells: calibrated, that moved from 4 to 8 of 15 cells over runs with other seeds, and was dropped.)
    seed0 = np.array(g["ch6_similarity_by_distance"][0])
    assert seed0[0] < seed0[-1] and (np.diff(seed0) > 0).any(), f"seed 0 falls off smoothly with distance: {seed0}"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_class_token_reads_ink_a_little_more_and_rollout_the_middle(book):
    """'a little more than their share'; fig-vit-attention's alt text: rollout brightest in the middle."""
    g = glued(CH6)
    for name in ("ch6_last_on_ink", "ch6_rollout_on_ink"):
        assert g["ch6_ink_share"] < g[name] < g["ch6_ink_share"] + 0.25, f"{name} = {g[name]:.2f}"
    assert g["ch6_rollout_on_centre"] > max(0.35, g["ch6_last_on_centre"]), (
        f"rollout puts {g['ch6_rollout_on_centre']:.2f} on the middle, the last layer {g['ch6_last_on_centre']:.2f}")


@pytest.mark.book
@pytest.mark.slow
def test_ch6_attention_relates_elements_and_the_sum_counts(book):
    """fig-sets: the Set Transformer far ahead on the odd one out, Deep Sets far ahead (and not perfect) on counting."""
    g = glued(CH6)
    odd_deep, odd_set = np.mean(g["ch6_sets_runs_odd_one_out_deep"]), np.mean(g["ch6_sets_runs_odd_one_out_set"])
    count_deep, count_set = np.mean(g["ch6_sets_runs_count_right_deep"]), np.mean(g["ch6_sets_runs_count_right_set"])
    assert odd_set > odd_deep + 0.2, f"odd one out: Set Transformer {odd_set:.3f}, Deep Sets {odd_deep:.3f}"
    assert count_deep > count_set + 0.2, f"counting: Deep Sets {count_deep:.3f}, Set Transformer {count_set:.3f}"
    assert max(g["ch6_sets_runs_count_right_deep"]) < 1, "Deep Sets counts perfectly: the prose says it does not"
    # The control a mean can express, the share on the right: "the order reverses", the Set Transformer ahead.
    share_deep, share_set = np.mean(g["ch6_sets_runs_share_right_deep"]), np.mean(g["ch6_sets_runs_share_right_set"])
    assert share_set > share_deep, f"share: Set Transformer {share_set:.3f}, Deep Sets {share_deep:.3f}"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_deep_sets_with_matched_parameters_stays_far_behind_on_the_odd_one_out(book):
    g = glued(CH6)
    wide, transformer = g["ch6_sets_parameters_wide"], g["ch6_sets_parameters_set"]
    assert abs(wide - transformer) < 0.1 * transformer, f"Deep Sets {wide:,} against {transformer:,}: not matched"
    odd_set = np.mean(g["ch6_sets_runs_odd_one_out_set"])
    for key in ("short", "long"):
        runs = g[f"ch6_sets_runs_wide_{key}"]
        assert np.mean(runs) < odd_set - 0.2, f"wide Deep Sets ({key}) {runs} not far behind {odd_set:.3f}"
    assert g["ch6_sets_long_steps"] == 5 * g["ch6_set_steps"], "the prose says five times the training"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_deletion_test_ranks_rollout_above_random_and_raw_weights_and_ink_below_raw_weights(book):
    """Blanking 4 patches: rollout's highest hurt more than random ones and its lowest less (every seed for the
    highest, on average for the lowest); on average more than the last layer's highest; the most-inked patches,
    on average, more than the last layer's highest too; the glued gap to rollout is the measured one."""
    g = glued(CH6)
    runs = {key: np.array(g[f"ch6_deletion_runs_{key}"]) for key in
            ("none", "highest_rollout", "highest_last", "random", "lowest_rollout", "most_ink")}
    assert g["ch6_blanked"] == 4
    assert (runs["highest_rollout"] < runs["random"]).all(), f"rollout's highest vs random: {runs}"
    assert runs["random"].mean() < runs["lowest_rollout"].mean(), f"rollout's lowest vs random: {runs}"
    assert runs["highest_rollout"].mean() < runs["highest_last"].mean(), f"rollout vs last layer: {runs}"
    assert runs["most_ink"].mean() < runs["highest_last"].mean(), f"ink vs last layer: {runs}"
    # "rollout is not clearly better than a map of where the ink is": not ahead by more than the seeds' spread.
    spread = max(runs["most_ink"].std(ddof=1), runs["highest_rollout"].std(ddof=1))
    assert runs["highest_rollout"].mean() > runs["most_ink"].mean() - spread, f"rollout clearly beats the ink: {runs}"
    assert g["ch6_deletion_ink_gap"] == pytest.approx(
        100 * abs((runs["most_ink"] - runs["highest_rollout"]).mean()))
    for key, values in runs.items():
        assert g[f"ch6_deletion_{key}"] == f"{values.min():.2f} to {values.max():.2f}"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_gat_attention_is_static_and_gatv2_finds_every_key(book):
    g = glued(CH6)
    assert g["ch6_lookup_gat_max"] <= 1 / 6 + 1e-6 and g["ch6_lookup_gat_favourites"] == 1, (
        f"GAT: {g['ch6_lookup_gat']} right, {g['ch6_lookup_gat_favourites']} favourite keys: not static")
    assert g["ch6_lookup_gatv2_min"] == 1, f"GATv2 finds only {g['ch6_lookup_gatv2']} of the keys"


@pytest.mark.book
@pytest.mark.slow
def test_ch6_edges_are_worth_a_lot_and_the_gcn_beats_the_gat(book):
    g = glued(CH6)
    mlp, gcn, gat = (np.array(g[f"ch6_nodes_runs_{k}"]) for k in ("mlp", "gcn", "gat"))
    assert min(gcn.mean(), gat.mean()) > mlp.mean() + 0.2, f"MLP {mlp}, GCN {gcn}, GAT {gat}: edges not worth a lot"
    assert len(gcn) == g["ch6_graphs"], f"{len(gcn)} graphs, but the prose says {g['ch6_graphs']}"
    # "on average the GAT does not beat the GCN by more than a point" (calibrated: GAT minus GCN from -3.5 to +0.5
    # points over runs with other graphs)
    assert g["ch6_nodes_gat_below_gcn"] == int((gat < gcn).sum()) and gat.mean() <= gcn.mean() + 0.01, (
        f"GCN {gcn}, GAT {gat}: the prose says the GAT does not beat the GCN by more than a point")
    # The control: learned attention "nothing that beats an even average by more than a point", and the two within
    # "a point or two" either way (calibrated: from -0.5 to +2.3 points); the glued differences are the measured ones.
    uniform = np.array(g["ch6_nodes_runs_uniform"])
    assert gat.mean() <= uniform.mean() + 0.01, f"learned attention {gat} beats uniform weights {uniform} by > 1 point"
    assert abs(uniform.mean() - gat.mean()) < 0.03, f"uniform weights {uniform}, learned attention {gat}"
    assert g["ch6_nodes_attention_gain"] == pytest.approx(100 * (gat.mean() - uniform.mean()))
    assert g["ch6_nodes_attention_gap"] == pytest.approx(100 * abs(uniform.mean() - gat.mean()))


# ---------------------------------------------------------------------------------------------------------------
# Chapter 7: the claims of the prose, the captions and the alt texts hold on the values the page measured.
# ---------------------------------------------------------------------------------------------------------------
CH7 = "07-backward-pass"
CH7_METHODS = ("chapter 4's loop", "SDPA", "checkpointing", "FlashAttention")


@pytest.mark.book
@pytest.mark.slow
def test_ch7_derivations_agree_with_autograd_to_float64_rounding(book):
    """The Jacobian, its product, the covariance, backprop by hand, FlashAttention and the merges 'agree'."""
    g = glued(CH7)
    for name in ("ch7_jacobian_difference", "ch7_vjp_difference", "ch7_covariance_difference",
                 "ch7_backprop_difference", "ch7_flash_difference", "ch7_merge_difference"):
        assert g[name] < 1e-12, f"{name} = {g[name]:.1e}: not float64 rounding"
    assert g["ch7_masked_query_gradient"] == 0, "the query with no allowed key gets a gradient"
    assert g["ch7_masked_query_torch_output"] == 0, "PyTorch no longer gives the query with no key a zero output"
    assert g["ch7_vjp_n"] == 100_000 and round(g["ch7_vjp_jacobian_gb"]) == 80, "the prose's 80 GB Jacobian"
    assert g["ch7_vjp_repeats"] >= 3 and g["ch7_vjp_ms"] > 0, "the VJP's time is not a best of several runs"


@pytest.mark.book
@pytest.mark.slow
def test_ch7_is_causal_is_top_left_and_the_exercise_is_bottom_right(book):
    """'Two causal conventions': for m = 2, n = 5, is_causal=True equals tril (causal_upper_left), exercise 7.4
    equals causal_lower_right, and the two conventions give different outputs."""
    conventions = glued(CH7)["ch7_causal_conventions"]
    for name in ("is_causal against tril", "causal_upper_left against tril", "causal_lower_right against exercise 7.4"):
        assert conventions[name] < 1e-12, f"{name}: outputs differ by {conventions[name]:.1e}"
    assert conventions["is_causal against exercise 7.4"] > 1e-3, "is_causal now aligns bottom-right: the prose is wrong"


@pytest.mark.book
@pytest.mark.slow
def test_ch7_gradcheck_passes_for_the_reference_and_fails_for_a_diagonal_only_softmax(book):
    gradchecks = glued(CH7)["ch7_gradchecks"]
    assert gradchecks == {"exercise 7.4, causal=False": True, "exercise 7.4, causal=True": True,
                          "softmax, diagonal only": False}, f"gradcheck's verdicts: {gradchecks}"


@pytest.mark.book
@pytest.mark.slow
def test_ch7_a_saturated_softmax_passes_almost_no_gradient_to_its_query(book):
    """fig-saturation's alt text: the largest weight rises from near 1/8 to 1; the Jacobian stays near its largest
    value while the weights are spread, then falls by orders of magnitude."""
    g = glued(CH7)
    sharpness, sizes = g["ch7_sharpness"], g["ch7_jacobian_sizes"]
    assert sharpness[0] < 0.25 and sharpness[-1] > 0.999, f"largest weight from {sharpness[0]:.3f} to {sharpness[-1]}"
    assert all(b >= a - 1e-12 for a, b in zip(sharpness, sharpness[1:])), "the largest weight does not only rise"
    assert sizes[0] > 0.5 * max(sizes), f"with spread weights the norm is {sizes[0]:.2f}, far from {max(sizes):.2f}"
    assert sizes[-1] < 1e-2 * max(sizes), f"the norm falls only from {max(sizes):.2e} to {sizes[-1]:.2e}"
    assert g["ch7_saturated_jacobian"] == sizes[-1] and g["ch7_largest_jacobian"] == max(sizes)


@pytest.mark.book
@pytest.mark.slow
def test_ch7_autograd_through_the_loop_saves_more_than_the_scores_and_the_others_save_linear_memory(book):
    """fig-saved-bytes: chapter 4's loop above one n x n matrix and growing as n^2; SDPA, checkpointing and
    FlashAttention proportional to n; FlashAttention and SDPA save exactly Q, K, V, O and one number per query,
    checkpointing exactly Q, K, V."""
    g = glued(CH7)
    lengths, d = g["ch7_saved_lengths"], g["ch7_saved_d"]
    saved = {name: [g["ch7_saved"][name][n] for n in lengths] for name in CH7_METHODS}
    growth = lengths[-1] / lengths[0]
    loop = saved["chapter 4's loop"]
    assert all(size > n * n * 8 for size, n in zip(loop, lengths)), f"the loop saves {loop}: not above one n x n matrix"
    assert loop[-1] / loop[0] > 0.7 * growth**2, f"the loop's bytes grow {loop[-1] / loop[0]:.1f}x over {growth}x n"
    for name in ("SDPA", "checkpointing", "FlashAttention"):
        assert saved[name][-1] / saved[name][0] == pytest.approx(growth, rel=0.05), f"{name}: {saved[name]}"
        assert saved[name][-1] < loop[-1] / 5, f"{name} saves {saved[name][-1]} bytes, near the loop's {loop[-1]}"
    assert saved["FlashAttention"] == saved["SDPA"] == [(4 * n * d + n) * 8 for n in lengths], (
        "FlashAttention and SDPA no longer save exactly Q, K, V, O and one number per query")
    assert saved["checkpointing"] == [3 * n * d * 8 for n in lengths], "checkpointing saves more than Q, K, V"
    assert g["ch7_saved_longest"] == lengths[-1]
    assert "FlashAttention" in g["ch7_sdpa_backward_name"], f"SDPA's backward is {g['ch7_sdpa_backward_name']}"
    assert (1, 1, 256) in [tuple(shape) for shape in g["ch7_sdpa_saved_shapes"]], "SDPA saves no logsumexp"


@pytest.mark.book
@pytest.mark.slow
def test_ch7_causal_blocks_and_the_io_counts_are_what_the_prose_says(book):
    g = glued(CH7)
    blocks = g["ch7_causal_blocks"]
    assert g["ch7_causal_skipped"] == pytest.approx(blocks * (blocks - 1) / 2 / blocks**2), "skipped blocks miscounted"
    assert blocks == 16, "fig-causal-blocks' caption and alt text say 16 x 16 blocks (n = 1024, blocks of 64)"
    assert g["ch7_causal_product_ratio"] == 1 - g["ch7_causal_skipped"], (
        f"the causal forward runs {g['ch7_causal_products']} products: not the share of the blocks it computes")
    io = g["ch7_io_counts"]
    flash, standard, memories = io["flash"], io["standard"], io["M"]
    N, d = io["N"], io["d"]
    assert standard == 4 * N * N + 4 * N * d, "Algorithm 0's count is not 4N^2 + 4Nd"
    assert all(b < a for a, b in zip(flash, flash[1:])), "FlashAttention's traffic does not fall as M grows"
    assert flash[0] > standard > flash[-1], "fig-io's alt text: FlashAttention crosses below standard attention"
    # Theorem 2: Theta(N^2 d^2 / M) once the query blocks are full (M >= 4 d^2).
    full = [count * M / (N * N * d * d) for count, M in zip(flash, memories) if M >= 4 * d * d]
    assert len(full) >= 3 and max(full) < 1.3 * min(full), f"count x M / (N^2 d^2) is not about constant: {full}"
    assert g["ch7_io_ratio"] == pytest.approx(g["ch7_io_standard_mib"] / g["ch7_io_flash_mib"]) and g["ch7_io_ratio"] > 1
    # 'FlashAttention moves more up to M = crossing, less above'; the caption's 'M ≈ 12,500', the alt text's 'about
    # twelve thousand numbers'.
    crossing = g["ch7_io_crossing"]
    assert [count >= standard for count in flash] == [M <= crossing for M in memories], (
        f"the glued counts do not cross at M = {crossing}: {list(zip(memories, flash))} against {standard}")
    assert 11_000 < crossing < 14_000, f"the curves cross at M = {crossing}, not near the caption's 12,500"
    assert g["ch7_io_crossing_kb"] == crossing * 2 / 1024


@pytest.mark.book
@pytest.mark.slow
def test_ch7_cpu_ratios_are_the_measured_ones_and_memory_stays_below_one_score_matrix(book):
    g = glued(CH7)
    flash, sdpa = g["ch7_cpu"]["FlashAttention"], g["ch7_cpu"]["SDPA"]
    for index, key in enumerate(("forward_time", "backward_time", "forward_memory", "backward_memory")):
        assert g[f"ch7_cpu_ratio_{key}"] == pytest.approx(flash[index] / sdpa[index]), key
    scores = g["ch7_cpu_n"] ** 2 * 8
    assert g["ch7_cpu_scores_mib"] == scores / 2**20
    # 'every peak measured ... is far below the 32 MiB of one n x n matrix'
    assert g["ch7_cpu_largest_peak_mib"] == max(flash[2:] + sdpa[2:]) / 2**20
    assert max(flash[2:] + sdpa[2:]) < scores / 4, f"peaks {flash[2:]}, {sdpa[2:]}: not far below one {scores}-byte matrix"
    # 'SDPA's forward peak is more than the output and logsumexp it returns: the rest is its kernel's workspace',
    # which the allocator's events count (MemTracker, the page's earlier probe, did not).
    kept = (g["ch7_cpu_n"] * 64 + g["ch7_cpu_n"]) * 8
    assert g["ch7_cpu_sdpa_kept_mib"] == kept / 2**20
    assert sdpa[2] > kept, f"SDPA's forward peak {sdpa[2]} is not above its output and logsumexp ({kept} bytes)"
    # 'That workspace is sized by the number of threads: with two, SDPA's peaks grow from ... to ...' (where a
    # calibration run pins two threads throughout, both sets of peaks are taken with two, and are the same).
    threads = g["ch7_cpu_threads"]
    if threads == [1, 2]:
        assert sdpa[4] > sdpa[2] and sdpa[5] > sdpa[3], f"SDPA's peaks with one thread {sdpa[2:4]}, with two {sdpa[4:]}"
    else:
        assert threads[0] == threads[1] and sdpa[4:] == sdpa[2:4], f"threads {threads}, SDPA's peaks {sdpa[2:]}"
    for index, key in [(2, "forward"), (3, "backward"), (4, "forward_2"), (5, "backward_2")]:
        assert g[f"ch7_cpu_sdpa_{key}_mib"] == sdpa[index] / 2**20, key
    assert g["ch7_cpu_repeats"] == 3, "fig-cpu's caption says the best of 3 runs"
    assert g["ch7_cpu_n"] == 2048 and g["ch7_cpu_block"] == 256, "fig-cpu's caption says n = 2048, blocks of 256"


@pytest.mark.book
@pytest.mark.slow
def test_ch7_low_precision_error_is_decided_by_the_accumulators(book):
    """'float32 adds nothing visible' to the inputs' rounding error; bf16 throughout multiplies it; SDPA given bf16
    adds less than the reference in bf16, on every draw (within the glued factors)."""
    g = glued(CH7)
    errors = {name: np.array(values) for name, values in g["ch7_bf16_errors"].items()}
    rounding = errors["inputs rounded, float64 arithmetic"]
    assert len(rounding) == g["ch7_bf16_seeds"] >= 5
    assert g["ch7_bf16_rounding_min"] == rounding.min() and g["ch7_bf16_rounding_max"] == rounding.max()
    assert np.all(rounding > 2.0**-12) and np.all(rounding < 2.0**-5), f"the inputs' rounding error {rounding}"
    for name, key in [("exercise 7.4, float32 arithmetic", "float32"), ("exercise 7.4, bf16 throughout", "bf16"),
                      ("SDPA given bf16", "sdpa")]:
        factor = errors[name] / rounding
        assert g[f"ch7_bf16_{key}_factor_min"] == pytest.approx(factor.min()), key
        assert g[f"ch7_bf16_{key}_factor_max"] == pytest.approx(factor.max()), key
    float32 = errors["exercise 7.4, float32 arithmetic"] / rounding
    assert np.all(np.abs(float32 - 1) < 1e-3), f"float32 arithmetic changes the error by the factors {float32}"
    bf16 = errors["exercise 7.4, bf16 throughout"] / rounding
    assert np.all(bf16 > 1.3), f"bf16 throughout multiplies the error only by {bf16}"
    sdpa = errors["SDPA given bf16"] / rounding
    # 'less than the reference in bf16 on every draw'; its output's one rounding to bf16 adds at most 2^-9 of an entry
    assert np.all(sdpa < bf16), f"SDPA given bf16: factors {sdpa}, the reference in bf16 {bf16}"
    assert np.all(errors["SDPA given bf16"] <= rounding + 2.0**-9), (
        f"SDPA given bf16: errors {errors['SDPA given bf16']}, more than the inputs' {rounding} plus 2^-9")


@pytest.mark.book
@pytest.mark.slow
def test_ch7_flash_attention_in_tinygpt_trains_alike_and_keeps_no_weights(book):
    values = glued(CH7)
    # "the same training step, to float64 rounding": losses and gradients agree far below float32's precision.
    difference, largest = values["ch7_tinygpt_difference"], values["ch7_tinygpt_grad_largest"]
    assert difference <= 1e-12 * max(largest, 1.0), f"TinyGPT with FlashAttention differs by {difference:.1e}"
    # "Of the first, <layers> tensors hold B h T^2 numbers ... With FlashAttention none is kept."
    assert values["ch7_tinygpt_score_sized"] == {"plain": values["ch7_tinygpt_layers"], "flash": 0}, (
        f"tensors of the score matrix's size kept: {values['ch7_tinygpt_score_sized']}")
    assert values["ch7_tinygpt_score_sized_plain"] == values["ch7_tinygpt_layers"]
    # Less is kept with FlashAttention, by at least those matrices less what it keeps instead (Q, K, V, O and L are
    # far smaller than one of them at T = 256).
    plain, flash = values["ch7_tinygpt_saved_plain_mib"], values["ch7_tinygpt_saved_flash_mib"]
    assert plain - flash > 0.9 * values["ch7_tinygpt_layers"] * values["ch7_tinygpt_score_matrix_mib"], (plain, flash)


@pytest.mark.book
@pytest.mark.slow
def test_ch7_page_runs_within_its_budget(book):
    """The page runs in every book build: at most 60 s of CPU time on one core."""
    seconds = glued(CH7)["ch7_page_cpu_seconds"]
    assert seconds < 60, f"book/07-backward-pass.md took {seconds:.0f} s of CPU time"
