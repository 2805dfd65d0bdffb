"""The similarity report's normalisation and fingerprints: what a copy changes hides nothing; honest answers differ."""
from __future__ import annotations

from autograde.pages import similarity
from autograde.pages.similarity import compare, make_answers, tokens

SOFTMAX = '''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`; any shape in, the same shape out."""
    x = np.asarray(x, dtype=float)
    shift = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    e = np.exp(x - shift)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
'''
# The same answer, renamed, recommented, its constants changed and its layout redone.
SOFTMAX_DISGUISED = '''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`; any shape in, the same shape out."""
    # convert the input first
    arr = np.asarray(x, dtype=float)
    m = np.max(arr, axis=axis, keepdims=True)   # the largest entry
    m = np.where(np.isfinite(m), m, 0)
    ex = np.exp(arr - m)

    denom = np.sum(ex,
                   axis=axis, keepdims=True)
    return np.divide(ex, denom, out=np.zeros_like(ex), where=denom > 0.0)
'''
# Honest: a different way to the same values.
SOFTMAX_LOOP = '''def softmax(x, axis=-1):
    """Softmax of `x` along `axis`; any shape in, the same shape out."""
    moved = np.moveaxis(np.array(x, dtype=float), axis, -1)
    result = np.zeros_like(moved)
    for index in np.ndindex(moved.shape[:-1]):
        row = moved[index]
        finite = row[np.isfinite(row)]
        if finite.size == 0:
            continue
        weights = np.exp(row - finite.max())
        result[index] = weights / weights.sum()
    return np.moveaxis(result, -1, axis)
'''
COSINE = '''def cosine_scores(queries, keys):
    """Cosine similarity: queries (m, d), keys (n, d) -> (m, n); zero vectors score 0."""
    qn = np.linalg.norm(queries, axis=-1, keepdims=True)
    kn = np.linalg.norm(keys, axis=-1, keepdims=True)
    q = np.divide(queries, qn, out=np.zeros_like(queries, dtype=float), where=qn > 0)
    k = np.divide(keys, kn, out=np.zeros_like(keys, dtype=float), where=kn > 0)
    return q @ k.T
'''
COSINE_OTHER = '''def cosine_scores(queries, keys):
    """Cosine similarity: queries (m, d), keys (n, d) -> (m, n); zero vectors score 0."""
    dots = np.einsum("md,nd->mn", queries, keys)
    lengths = np.outer(np.sqrt((queries ** 2).sum(1)), np.sqrt((keys ** 2).sum(1)))
    safe = np.where(lengths == 0, 1, lengths)
    return np.where(lengths == 0, 0, dots / safe)
'''
GIVEN = {"softmax": {'def softmax(x, axis=-1):', '"""Softmax of `x` along `axis`; any shape in, the same shape out."""',
                     "# YOUR CODE HERE", "raise NotImplementedError()"},
         "cosine_scores": {"def cosine_scores(queries, keys):",
                           '"""Cosine similarity: queries (m, d), keys (n, d) -> (m, n); zero vectors score 0."""',
                           "# YOUR CODE HERE", "raise NotImplementedError()"}}


def symbols(source: str) -> list[str]:
    return [s for s, _ in tokens(source)]


def student(name: str, **cells: str):
    return make_answers(name, "student", list(cells.items()), GIVEN)


def test_names_numbers_strings_comments_and_layout_are_normalised_but_library_calls_are_not():
    assert symbols("y = np.exp(x)  # note\n") == ["V", "=", "np", ".", "exp", "(", "V", ")"]
    assert symbols("total = values.sum(axis=-1, keepdims=True)") == \
        ["V", "=", "V", ".", "sum", "(", "axis", "=", "-", "N", ",", "keepdims", "=", "True", ")"]
    assert symbols('label = f"row {i}" + \'x\'') == ["V", "=", "S", "+", "S"]
    assert symbols('def f(a):\n    """A docstring."""\n    \'another\'\n    return len(a)') == \
        ["def", "V", "(", "V", ")", ":", "return", "len", "(", "V", ")"]
    assert symbols("import numpy as npy\nz = npy.log(q)") == \
        ["import", "numpy", "as", "npy", "V", "=", "npy", ".", "log", "(", "V", ")"]
    # np.exp and np.log are different steps: attributes stay as written.
    assert symbols("y = np.exp(x)") != symbols("y = np.log(x)")


def test_a_renamed_recommented_reformatted_copy_is_the_same_answer():
    original, copy = student("ann", softmax=SOFTMAX), student("cat", softmax=SOFTMAX_DISGUISED)
    assert [s for s, _ in tokens(SOFTMAX)][8:] == [s for s, _ in tokens(SOFTMAX_DISGUISED)][8:], \
        "the disguised copy does not normalise to the original's tokens"
    pairs = compare("01", [original, copy], threshold=0.5, min_tokens=20)
    assert [(p.a, p.b) for p in pairs] == [("ann", "cat")], f"the renamed copy was not flagged: {pairs}"
    assert pairs[0].similarity == 1.0, f"a renamed copy is only {pairs[0].similarity:.0%} similar"


def test_reordered_cells_still_match():
    ann = student("ann", softmax=SOFTMAX, cosine_scores=COSINE)
    # The copier's notebook lists the cells the other way round, and pastes the softmax into the cosine cell.
    cat = make_answers("cat", "student", [("cosine_scores", SOFTMAX_DISGUISED), ("softmax", COSINE)], GIVEN)
    pairs = compare("01", [ann, cat], threshold=0.5, min_tokens=20)
    assert pairs and pairs[0].similarity > 0.9, f"reordering the cells hid the copy: {pairs}"
    # (Both answers also use np.divide(..., out=..., where=...): those runs match across the cells too.)
    assert {"softmax/cosine_scores", "cosine_scores/softmax"} <= set(pairs[0].cells.split("; ")), pairs[0].cells


def test_honest_answers_written_differently_are_not_flagged():
    ann = student("ann", softmax=SOFTMAX, cosine_scores=COSINE)
    bob = student("bob", softmax=SOFTMAX_LOOP, cosine_scores=COSINE_OTHER)
    pairs = compare("01", [ann, bob], threshold=0.3, min_tokens=20)
    assert not pairs, f"two answers written differently were flagged: {[(p.a, p.b, p.similarity) for p in pairs]}"


def test_the_given_code_is_left_out():
    # Two untouched answer cells share only the given stub: nothing to compare, so no tokens at all.
    stub = 'def softmax(x, axis=-1):\n    """Softmax of `x` along `axis`; any shape in, the same shape out."""\n' \
           "    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    assert not student("ann", softmax=stub).cells, "the given stub was counted as the student's code"
    # Without leaving it out, the stub alone would make the two alike.
    bare = [make_answers(n, "student", [("softmax", stub)]) for n in ("ann", "bob")]
    assert compare("01", bare, threshold=0.5, min_tokens=1), "the stub alone should match when not left out"
    # An answer that keeps the given signature and docstring: its first token is its own code.
    assert student("ann", softmax=SOFTMAX).cells[0].lines[0] == 3, "the given signature or docstring was counted"


def own_cosine(i: int) -> str:
    """A cosine answer of student `i`'s own: other library calls than any other student's."""
    f = ["exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "square", "negative", "floor", "ceil", "trunc"]
    return (f"def cosine_scores(queries, keys):\n    a = np.{f[i]}(queries) @ np.{f[i + 1]}(keys).T\n"
            f"    b = np.{f[i + 2]}(a, axis=0) * np.{f[i]}(keys).sum()\n    return np.{f[i + 1]}(b) - a\n")


def test_a_step_the_whole_class_writes_weighs_little():
    # Ten students write the same softmax, each their own cosine: sharing what everyone writes is no copy ...
    crowd = [student(f"s{i}", softmax=SOFTMAX, cosine_scores=own_cosine(i)) for i in range(10)]
    assert not compare("01", crowd, threshold=0.5, min_tokens=20), \
        "two students who share only the answer all ten wrote were flagged"
    # ... but a student who also has another's own answer is.
    copier = student("s10", softmax=SOFTMAX, cosine_scores=own_cosine(3))
    flagged = compare("01", crowd + [copier], threshold=0.5, min_tokens=20)
    assert [(p.a, p.b) for p in flagged] == [("s3", "s10")], [(p.a, p.b, round(p.similarity, 2)) for p in flagged]
    # Copies of the reference are flagged against it however many students made them (each is all of its share).
    reference = make_answers("reference", "reference", [("softmax", SOFTMAX)], GIVEN)
    copies = [student(f"r{i}", softmax=SOFTMAX) for i in range(10)]
    flagged = compare("01", copies + [reference], threshold=0.5, min_tokens=20)
    assert {(p.a, p.b) for p in flagged if p.b == "reference"} == {(f"r{i}", "reference") for i in range(10)}, \
        "copies of the reference must be flagged against it however many students made them"


def test_fingerprints_find_every_long_enough_shared_run():
    # The winnowing guarantee: a shared run of K + WINDOW - 1 tokens yields a common fingerprint.
    run = tuple(range(100, 100 + similarity.K + similarity.WINDOW - 1))
    for before in range(6):
        a = tuple(range(before)) + run + (7, 8, 9)
        b = (50, 51) + run + tuple(range(before))
        common = {h for h, _ in similarity.fingerprints(a)} & {h for h, _ in similarity.fingerprints(b)}
        assert common, f"a shared run of {len(run)} tokens after {before} others left no common fingerprint"
    assert similarity.fingerprints(tuple(range(similarity.K - 1))) == [], "a cell shorter than K has runs"
