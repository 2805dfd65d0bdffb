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
# Chapter 5, the block: the claims of "From attention layer to block" hold on the values the page measured.
# ---------------------------------------------------------------------------------------------------------------
CH5 = "05-transformer"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_one_position_gradient_is_flat_in_post_norm_and_falls_like_inverse_sqrt_depth_in_pre_norm(book):
    from tests.support.claims import glued
    values = glued(CH5)
    post, pre, slope = values["ch5_post_position_ratio"], values["ch5_pre_position_ratio"], values["ch5_pre_position_slope"]
    assert 0.8 <= post <= 1.25, f"post-norm's per-position gradient changes by a factor {post:.2f} from 2 to 32 blocks: not flat"
    assert pre < 0.5, f"pre-norm's per-position gradient falls only by a factor {pre:.2f} from 2 to 32 blocks"
    assert -0.7 <= slope <= -0.3, f"pre-norm's log-log slope is {slope:.2f}, not near the -0.5 of 1/sqrt(L)"
    assert values["ch5_init_seeds"] >= 12, "the figure promises 12 initialisations"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_post_norm_mean_gradient_rises_while_its_tokens_become_parallel(book):
    from tests.support.claims import glued
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
    from tests.support.claims import glued
    values = glued(CH5)
    cold, warm = values["ch5_accuracy_post_cold"], values["ch5_accuracy_post_warm"]
    assert len(cold) == values["ch5_train_seeds"] >= 3, "the text promises a few seeds"
    assert max(cold) < 0.15, f"post-norm without warm-up gets {cold} right: not about the 1/16 of guessing"
    assert min(warm) > 0.9, f"post-norm with warm-up gets only {warm} right"
    for name in ("ch5_accuracy_pre_cold", "ch5_accuracy_pre_warm"):
        assert min(values[name]) > 0.9, f"{name} = {values[name]}: pre-norm does not learn the task"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_gpt2_scaling_keeps_the_stream_the_same_size_at_any_depth(book):
    from tests.support.claims import glued
    values = glued(CH5)
    plain, scaled, shallow = (values[f"ch5_stream_{k}"] for k in ("plain_deep", "scaled_deep", "scaled_shallow"))
    assert plain > 4, f"without the scaling, the stream grows only {plain:.2f} times over {values['ch5_stream_deepest']} blocks"
    assert abs(scaled - shallow) < 0.05 * shallow, f"with the scaling the stream ends {scaled:.2f} vs {shallow:.2f} times as long"
    assert scaled < 1.5, f"with the scaling the stream still grows {scaled:.2f} times"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_tying_with_default_embeddings_gives_huge_logits_at_init(book):
    from tests.support.claims import glued
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
    from tests.support.claims import glued
    values = glued(CH5)
    assert values["ch5_vaswani_peak"] == pytest.approx((512 * 4000) ** -0.5), "eq. 3's peak is not (d_model warmup)^-1/2"
    old, new = values["ch5_params_2017"], values["ch5_params_modern"]
    assert old == 12 * 512 ** 2 + 13 * 512, f"the 2017 block has {old} parameters, not 12 d² + 13 d"
    assert abs(new - old) < 0.01 * old, f"the modern block ({new:,}) does not cost what the 2017 one ({old:,}) does"


@pytest.mark.book
@pytest.mark.slow
def test_ch5_pre_norm_without_warm_up_learns_sooner(book):
    from tests.support.claims import glued
    values = glued(CH5)
    cold, warm, post = (values[f"ch5_median_learned_step_{k}"] for k in ("pre_cold", "pre_warm", "post_warm"))
    assert cold < warm, f"pre-norm without warm-up learns at step {cold}, not sooner than with it ({warm})"
    assert cold < post, f"pre-norm without warm-up learns at step {cold}, not sooner than post-norm with it ({post})"
    never = values["ch5_learned_step_post_cold"]
    assert all(step is None for step in never), f"post-norm without warm-up does learn, at steps {never}"
