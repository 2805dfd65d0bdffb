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
# Chapter 5, when not and positions: the claims of "When not to use attention" and "Positions revisited".
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture
def ch5_values(book):
    from tests.support.claims import glued

    return glued("05-transformer")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_every_head_puts_more_than_uniform_weight_on_copies_and_more_with_more_copies(ch5_values):
    """'Every head of both models puts more there [than uniform attention], and more the more copies there are.'"""
    uniform = ch5_values["ch5_copy_share_uniform"]
    for task in ("independent", "relational"):
        for head in (0, 1):
            share = ch5_values[f"ch5_copy_share_{task}_{head}"]
            assert share > uniform, f"the {task} model's head {head} puts {share:.2f} on copies, uniform {uniform:.2f}"
        for head, by_count in enumerate(ch5_values[f"ch5_copy_share_by_count_{task}"]):
            assert all(a < b for a, b in zip(by_count, by_count[1:])), (
                f"the {task} model's head {head}: its share on copies does not rise with their number: {by_count}")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_the_independent_models_heads_look_more_like_counting_heads(ch5_values):
    """'By this measure the heads of the model trained on the independent task look the most like it.'"""
    independent = [ch5_values[f"ch5_copy_share_independent_{h}"] for h in (0, 1)]
    relational = [ch5_values[f"ch5_copy_share_relational_{h}"] for h in (0, 1)]
    assert min(independent) > max(relational), (
        f"copy shares: independent model {independent}, relational model {relational}; the prose says the "
        "independent model's heads put more weight on copies")


@pytest.mark.book
@pytest.mark.slow
def test_ch5_interventions_change_only_the_relational_model(ch5_values):
    """Removing attention leaves the independent model's accuracy; it takes the relational model (and uniform
    weights too) below always answering the most common count."""
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
def test_ch5_rope_scores_are_constant_along_diagonals_and_added_sinusoids_are_not(ch5_values):
    """'Along a diagonal the RoPE scores differ by rounding error; with added sinusoids by most of the map's range.'"""
    assert ch5_values["ch5_rope_spread"] < 1e-10, f"RoPE's spread along a diagonal: {ch5_values['ch5_rope_spread']}"
    spread, whole = ch5_values["ch5_added_spread"], ch5_values["ch5_added_range"]
    assert spread > 0.5 * whole, f"added sinusoids: spread {spread:.2f} along a diagonal, range {whole:.2f}"
