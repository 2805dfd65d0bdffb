"""The similarity report's normalisation and fingerprints: what a copy changes hides nothing; honest answers differ."""
from __future__ import annotations

import pytest

from autograde.pages import fingerprints, pairs, similarity
from autograde.pages.code_tokens import tokens
from autograde.pages.fingerprints import make_answers
from autograde.pages.similarity import compare

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
    # (a module is written by its name: np is numpy)
    assert symbols("y = np.exp(x)  # note\n") == ["V", "=", "numpy", ".", "exp", "(", "V", ")"]
    assert symbols("total = values.sum(axis=-1, keepdims=True)") == \
        ["V", "=", "V", ".", "sum", "(", "axis", "=", "-", "N", ",", "keepdims", "=", "True", ")"]
    assert symbols('label = f"row {i}" + \'x\'') == ["V", "=", "S", "+", "S"]
    assert symbols('def f(a):\n    """A docstring."""\n    \'another\'\n    return len(a)') == \
        ["def", "V", "(", "V", ")", ":", "return", "len", "(", "V", ")"]
    assert symbols("import numpy as npy\nz = npy.log(q)") == ["V", "=", "numpy", ".", "log", "(", "V", ")"]
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
    assert student("ann", softmax=SOFTMAX).cells[0].lines[0][0] == 3, "the given signature or docstring was counted"


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


def test_pairs_are_the_same_whatever_the_block_of_students_scored_at_once(monkeypatch):
    crowd = [student(f"s{i}", softmax=SOFTMAX, cosine_scores=own_cosine(i)) for i in range(10)]
    crowd += [student("s10", softmax=SOFTMAX_DISGUISED, cosine_scores=own_cosine(1)),
              student("s11", softmax=SOFTMAX_LOOP, cosine_scores=own_cosine(8))]
    whole = [(p.a, p.b, p.similarity) for p in compare("01", crowd, threshold=0.5, min_tokens=20)]
    assert {(a, b) for a, b, _ in whole} == {("s1", "s10"), ("s8", "s11")}, whole
    monkeypatch.setattr(pairs, "BLOCK", 3)  # (s1 and s10, s8 and s11 fall into different blocks)
    assert [(p.a, p.b, p.similarity) for p in compare("01", crowd, threshold=0.5, min_tokens=20)] == whole


def test_fingerprints_find_every_long_enough_shared_run():
    # The winnowing guarantee: a shared run of K + WINDOW - 1 tokens yields a common fingerprint.
    run = tuple(range(100, 100 + fingerprints.K + fingerprints.WINDOW - 1))
    for before in range(6):
        a = tuple(range(before)) + run + (7, 8, 9)
        b = (50, 51) + run + tuple(range(before))
        common = {h for h, _ in fingerprints.fingerprints(a)} & {h for h, _ in fingerprints.fingerprints(b)}
        assert common, f"a shared run of {len(run)} tokens after {before} others left no common fingerprint"
    assert fingerprints.fingerprints(tuple(range(fingerprints.K - 1))) == [], "a cell shorter than K has runs"


def test_answers_are_found_as_grading_finds_them_in_damaged_notebooks(tmp_path):
    from tests.support.synthetic import completed_notebook, write_submission

    pasted = completed_notebook("01-weighted-sum")
    for cell in pasted.cells:  # (code pasted into a fresh notebook: no nbgrader metadata at all)
        cell.metadata = {}
    junk = completed_notebook("01-weighted-sum")
    junk.cells[0].metadata["nbgrader"] = "junk"
    paths = {"pasted": write_submission(pasted, tmp_path, "pasted", "01-weighted-sum"),
             "junk": write_submission(junk, tmp_path, "junk", "01-weighted-sum")}
    authors = {a.author: a for a in similarity.read_answers("01-weighted-sum", paths)}
    assert {a.kind for a in authors.values()} == {"student", "reference", "book"}, sorted(authors)
    answers = {c.label for c in authors["reference"].cells}
    for student in paths:
        assert {c.label for c in authors[student].cells} == answers, f"{student}'s answer cells were not all found"
    assert compare("01-weighted-sum", list(authors.values()))[0].similarity == 1.0


def test_the_reports_settings_change_no_cache_key_and_the_switch_is_in_the_help(capsys):
    from autograde.__main__ import main
    from autograde.grade import OWN_FILES, settings_in_force

    assert settings_in_force({"Similarity": {"threshold": 0.95, "enabled": False}}) == settings_in_force({}), \
        "a setting of the similarity report is in the results' cache key: changing it would regrade every notebook"
    assert {"similarity.csv", "similarity.html"} <= set(OWN_FILES), "a rerun would not replace the similarity report"
    try:
        main(["grade", "--help"])
    except SystemExit:
        pass
    assert "--no-similarity" in capsys.readouterr().out, "--help does not list --no-similarity"


def test_a_failure_of_the_report_fails_no_grading_and_leaves_no_half_written_report(tmp_path, monkeypatch, caplog):
    from autograde import grade

    def half_written(notebooks, assignments, out, settings):
        (out / "similarity.csv").write_text("assignment,student_a\n")
        raise RuntimeError("disk full")

    monkeypatch.setattr(grade, "write_similarity", half_written)
    assert grade._similarity({}, ["01-weighted-sum"], tmp_path, {}) is None
    assert not (tmp_path / "similarity.csv").exists(), "a half-written similarity.csv was left"
    assert "no similarity report: RuntimeError: disk full" in caplog.text, caplog.text
    monkeypatch.setattr(grade, "write_similarity", lambda *args: pytest.fail("written though switched off"))
    assert grade._similarity({}, ["01-weighted-sum"], tmp_path, {"Similarity": {"enabled": False}}) is None


def test_a_module_called_by_another_name_is_the_module():
    reference = symbols("y = np.exp(x)")
    assert symbols("import numpy as xp\ny = xp.exp(x)") == reference, "an alias of numpy is not numpy"
    assert symbols("from numpy import exp\ny = exp(x)") == reference, "a function imported from numpy is not numpy's"
    assert symbols("import numpy\nxp = numpy\ny = xp.exp(x)") == reference, "numpy given another name is not numpy"
    # What is called stays: numpy's exp is not math's, nor numpy's log.
    assert symbols("import math as xp\ny = xp.exp(x)") != reference
    assert symbols("import numpy as xp\ny = xp.log(x)") != reference


def test_dead_branches_go_and_a_variable_set_from_a_module_stays_a_variable():
    # ``if False:`` never runs; the body of ``while True:`` does, and is normalised like any other.
    assert symbols("def f(a):\n    if False:\n        a = a * 2\n    return a") == symbols("def f(a):\n    return a")
    assert symbols("while True:\n    y = f(x)  # note\n    pass") == symbols("while True:\n    z = f(w)")
    # A variable first set to a module's constant, then changed, is a variable: its statements stay.
    assert symbols("r = np.pi\nr = r * 2\nprint(r)")[:3] == ["V", "=", "numpy"]


def test_builtin_names_used_as_variables_are_variables_and_builtins_called_stay():
    assert symbols("input = np.sum(x)\nid = input * 2") == symbols("total = np.sum(x)\ndoubled = total * 2")
    assert symbols("def f(iter):\n    return iter + 1") == symbols("def f(a):\n    return a + 1")
    assert symbols("n = len(x)") != symbols("n = max(x)"), "two builtins called are the same step"
    # Code that does not parse is still compared (as written, its names abstracted as before).
    assert symbols("y = np.exp(x\nz = (") == symbols("w = np.exp(q\nz = (")


def test_a_long_chain_of_variables_read_once_is_tokenised_not_lost():
    # Each line feeds the next: inlined without a bound, the chain would nest past what the tree's passes recurse into.
    chain = "def f(x):\n    v0 = np.zeros(3)\n" + "".join(f"    v{i} = np.exp(v{i - 1}) + {i}\n" for i in range(1, 400))
    found = symbols(chain + "    return v399\n")
    assert found.count("exp") == 399 and found.count("return") == 1, found[-12:]


def test_a_cell_two_students_share_with_the_book_is_no_copied_cell():
    # Two students hand in the same long cosine answer, each with their own softmax ...
    ann = student("ann", softmax=SOFTMAX, cosine_scores=COSINE)
    bob = student("bob", softmax=SOFTMAX_LOOP, cosine_scores=COSINE)
    copied = similarity.copied_cells([ann, bob], min_tokens=40)
    assert [(c.a, c.b, c.label_a) for c in copied] == [("ann", "bob", "cosine_scores")], copied
    # ... which is no evidence when the book's page has that code: it is for all to use.
    book = make_answers("book", "book", [("book cell 3", COSINE)])
    assert not similarity.copied_cells([ann, bob, book], min_tokens=40), "the book's code was taken for a copy"


# ---------------------------------------------------------------------------------------------------------------
# The disguised class of benchmarks/similarity_class.py: copies of the reference answers with each disguise, three
# honest students answering in the alternatives of tests/alternatives/ (independent correct answers), and pat, who
# copies two of ann's nine cells whole and writes the rest.

FIRST = "01-weighted-sum"


@pytest.fixture(scope="module")
def disguised(tmp_path_factory):
    """Every pair's similarity ({(a, b): float}, over all pairs), the copied cells found, the folder the report was
    written to, and the authors read, on a class of chapter 1 notebooks read as the report reads them (no kernel
    runs)."""
    from benchmarks.similarity_class import disguised_class

    paths = disguised_class(tmp_path_factory.mktemp("disguised"))
    authors = similarity.read_answers(FIRST, paths)
    scores = {(p.a, p.b): p.similarity for p in compare(FIRST, authors, threshold=0.0, min_tokens=0)}
    scores |= {(b, a): s for (a, b), s in scores.items()}
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as patch:  # (the class read once: reading the reference costs most here)
        patch.setattr(similarity, "read_answers", lambda assignment, notebooks: authors)
        similarity.write_similarity({(s, FIRST): p for s, p in paths.items()}, [FIRST], out)
    return scores, similarity.copied_cells(authors), out, authors


@pytest.mark.parametrize("disguise", ["aliases", "builtin names", "lines swapped", "dead code", "loops",
                                      "all disguises"])
def test_a_disguised_copy_of_the_reference_scores_as_a_whole_copy(disguised, disguise):
    scores, _, _, _ = disguised
    assert scores[(disguise, "reference")] == 1.0, \
        f"a copy of the reference disguised by {disguise} scores {scores[(disguise, 'reference')]:.3f}"


def test_honest_pairs_stay_under_the_flag_and_share_no_copied_cell(disguised):
    from benchmarks.similarity_class import HONEST as honest

    scores, copied, _, _ = disguised
    over = {pair: round(scores.get(pair, 0.0), 3) for pair in honest if scores.get(pair, 0.0) >= 0.7}
    assert not over, f"honest pairs scored at or above the 70% flag: {over}"
    found = {(c.a, c.b) for c in copied} | {(c.b, c.a) for c in copied}
    assert not found & set(honest), f"honest pairs reported with copied cells: {found & set(honest)}"


def test_a_student_who_copies_two_cells_whole_is_reported_with_those_cells(disguised):
    import csv

    from benchmarks.similarity_class import COPIED

    scores, copied, out, _ = disguised
    cells = {(c.label_a, c.label_b) for c in copied if {c.a, c.b} == {"ann", "pat"}}
    assert cells == {(g, g) for g in COPIED}, f"pat's copied cells reported: {cells}, not {COPIED}"
    # The whole notebooks are under the flag: only the cells show the copy.
    assert scores[("ann", "pat")] < 0.7, scores[("ann", "pat")]
    # The report lists the pair, with its copied cells, in the CSV and on the page.
    with open(out / similarity.CSV, newline="") as f:
        rows = {(r["student_a"], r["student_b"]): r for r in csv.DictReader(f)}
    assert set(rows[("ann", "pat")]["copied_cells"].split("; ")) == set(COPIED), rows.get(("ann", "pat"))
    assert float(rows[("ann", "pat")]["similarity"]) < 0.7, rows[("ann", "pat")]
    page = (out / similarity.HTML).read_text()
    assert "ann and pat" in page and "copied cells: nadaraya_watson; softmax" in page, "the page lacks the copy"


def test_a_pair_with_a_copied_cell_is_shown_however_many_pairs_are_more_similar(disguised, tmp_path, monkeypatch):
    authors = disguised[3]
    monkeypatch.setattr(similarity, "read_answers", lambda assignment, notebooks: authors)
    monkeypatch.setattr(similarity, "SHOWN_PAIRS", 1)  # (the whole copies of the reference, at 100%, come first)
    similarity.write_similarity({(a.author, FIRST): tmp_path for a in authors}, [FIRST], tmp_path)
    page = (tmp_path / similarity.HTML).read_text()
    assert "ann and pat" in page and "2 shown: the most similar, and every one with a copied cell" in page, page[-3000:]


# ---------------------------------------------------------------------------------------------------------------
# End to end: python -m autograde grade on a handful of chapter-1 notebooks, one a renamed copy.

@pytest.fixture(scope="module")
def similarity_run():
    """Four students graded twice into one folder: with the similarity report (the default), then without it.
    ann and bob answer in different correct ways; cat hands in ann's answers renamed, recommented and with the
    cells in another order; eve hands in the reference with comments added. (A kept scenario:
    tests/support/scenarios.py.) What the first run wrote, the folder, and what each run printed."""
    from tests.support.scenarios import kept

    return kept("similarity-run", __file__, _grade_twice)


def _grade_twice(base):
    import random

    from benchmarks.similarity_class import ANN, BOB, alternatives
    from tests.support.commands import grade_command
    from tests.support.disguise import local_names, rename
    from tests.support.synthetic import completed_notebook, write_submission

    submitted, out = base / "submitted", base / "out"
    ann = completed_notebook(FIRST, alternatives(ANN))
    write_submission(ann, submitted, "ann", FIRST)
    write_submission(completed_notebook(FIRST, alternatives(BOB)), submitted, "bob", FIRST)
    cat = completed_notebook(FIRST, alternatives(ANN))
    for cell in cat.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            names = local_names(cell.source)
            cell.source = "# my own work\n" + rename(cell.source, {n: f"mine_{n}" for n in names})
    random.Random(0).shuffle(cat.cells)
    write_submission(cat, submitted, "cat", FIRST)
    eve = completed_notebook(FIRST)
    for cell in eve.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = "\n".join(f"{line}  # ok" if line.strip() and not line.rstrip().endswith(":") else line
                                    for line in cell.source.splitlines())
    write_submission(eve, submitted, "eve", FIRST)
    first = grade_command(submitted, out, "--assignment", FIRST, "--jobs", "1")
    assert first.returncode == 0, first.stderr
    seen = {name: (out / name).read_bytes() for name in ("grades.csv", "scores.csv", "similarity.csv",
                                                         "similarity.html", "report.html")}
    second = grade_command(submitted, out, "--assignment", FIRST, "--jobs", "1", "--no-similarity")
    assert second.returncode == 0, second.stderr
    return {"seen": seen, "out": out, "first": first.stdout, "second": second.stdout}


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_renamed_copy_and_the_recommented_reference_are_flagged_and_honest_work_is_not(similarity_run):
    import csv
    import io

    seen, stdout = similarity_run["seen"], similarity_run["first"]
    rows = list(csv.DictReader(io.StringIO(seen["similarity.csv"].decode())))
    header = seen["similarity.csv"].decode().splitlines()[0]
    assert header == "assignment,student_a,student_b,kind,similarity,matched_tokens,matched_cells,copied_cells", \
        header
    pairs = {(r["student_a"], r["student_b"]): r for r in rows}
    assert ("ann", "cat") in pairs and float(pairs[("ann", "cat")]["similarity"]) >= 0.9, \
        f"the renamed, recommented, reordered copy was not flagged at 90% or more: {rows}"
    assert pairs[("ann", "cat")]["kind"] == "student" and "softmax" in pairs[("ann", "cat")]["matched_cells"]
    assert ("eve", "reference") in pairs and pairs[("eve", "reference")]["kind"] == "reference", \
        f"the reference with comments added was not flagged against the reference: {rows}"
    honest = {p for p in pairs if {"ann", "bob"} == set(p) or {"cat", "bob"} == set(p)}
    assert not honest, f"answers written in different ways were flagged: {[pairs[p] for p in honest]}"
    assert all(r["assignment"] == FIRST for r in rows)
    assert "similarity.html" in stdout, f"the command does not say where the similarity report is: {stdout}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_similarity_page_shows_the_matching_lines_side_by_side_offline_and_the_report_links_it(similarity_run):
    seen = similarity_run["seen"]
    page = seen["similarity.html"].decode()
    assert "ann and cat" in page, "the page has no section for the pair ann, cat"
    section = page[page.index("ann and cat"):]
    assert 'class="line matched"' in section and "mine_" in section, \
        "the pair's cells are not shown with their matched lines highlighted"
    assert "http://" not in page and "https://" not in page and "<script" not in page, "the page needs the network"
    assert 'href="similarity.html"' in seen["report.html"].decode(), "report.html does not link the similarity report"


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_grades_are_byte_identical_with_and_without_the_similarity_report(similarity_run):
    seen, out, second = similarity_run["seen"], similarity_run["out"], similarity_run["second"]
    assert (out / "grades.csv").read_bytes() == seen["grades.csv"], "grades.csv changed with --no-similarity"
    assert (out / "scores.csv").read_bytes() == seen["scores.csv"], "scores.csv changed with --no-similarity"
    # The rerun reused every result (the report's settings are not in the cache key) and removed the old report.
    assert "0 graded now, 4 unchanged" in second, second
    assert not (out / "similarity.csv").exists() and not (out / "similarity.html").exists(), \
        "a run with --no-similarity left the last run's similarity report in place"
    assert "similarity.html" not in (out / "report.html").read_text(), "report.html links a report not written"


def test_the_csv_starts_no_formula_and_one_odd_notebook_is_left_out_not_the_class(tmp_path, monkeypatch, caplog):
    import csv

    import nbformat

    from tests.support.synthetic import completed_notebook

    notebooks = {}
    for student in ("=HYPERLINK(1)", "bob", "odd"):
        path = tmp_path / f"{len(notebooks)}.ipynb"
        nbformat.write(completed_notebook(FIRST), path)
        notebooks[(student, FIRST)] = path
    genuine = similarity.make_answers

    def fails_on_odd(student, *args, **kwargs):
        if student == "odd":
            raise RecursionError("maximum recursion depth exceeded")
        return genuine(student, *args, **kwargs)

    monkeypatch.setattr(similarity, "make_answers", fails_on_odd)
    similarity.write_similarity(notebooks, [FIRST], tmp_path, similarity.Similarity())
    with open(tmp_path / similarity.CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    students = {r["student_a"] for r in rows} | {r["student_b"] for r in rows}
    assert "'=HYPERLINK(1)" in students and "bob" in students, rows  # (the two copies of the reference: flagged)
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values()), rows
    assert "odd" not in students and "odd's 01-weighted-sum left out: RecursionError" in caplog.text, caplog.text
