"""Measure the similarity report on a synthetic class of chapter 1 (not a test).

    .venv/bin/python -m benchmarks.similarity_class [--students 300] [--copies 30] [--repeat 3] [--seed 0] [--keep DIR]
    .venv/bin/python -m benchmarks.similarity_class --disguises

Honest students answer each of chapter 1's nine answer cells in one of several
correct ways: the correct alternatives of tests/alternatives/01-weighted-sum/,
the reference, and the templates below, each template with choice points
(``⟨a¦b⟩``: ``np.sum(e, ...)`` or ``e.sum(...)``, ``dtype=float`` or
``dtype=np.float64``, ...) that every student resolves on their own; then each
student names their variables, comments and wraps returns their own way. Some
students leave a cell unanswered. The copiers take another student's notebook
(or the reference) and disguise it: verbatim, renamed variables, cells in
another order, comments and blank lines added, constants changed, all of these
at once, or only five of the nine cells copied; numpy imported under another
name, locals renamed to builtin names, independent lines swapped, dead code
added, comprehensions written as loops, all five at once, or two of the nine
cells copied and the rest written. Two copiers may copy the same student.

It prints which copies were found (a copier and their source, or two copiers of
one source, flagged as a pair), how many pairs of honest students and how many
honest students against the reference or the book were flagged, and the time
of the similarity step (reading the notebooks, comparing, writing the CSV and
HTML) over the whole class: the best of --repeat runs. Copies and honest
answers are not graded here (no kernels run): the alternatives and the
reference are graded by the test suite; the templates are written to be correct.
"""
from __future__ import annotations

import argparse
import ast
import csv
import random
import re
import tempfile
import time
from pathlib import Path

from autograde.pages.similarity import Similarity, write_similarity
from tests.support.disguise import local_names, rename
from tests.support.synthetic import completed_notebook, student_notebook, write_submission

REPO = Path(__file__).resolve().parent.parent
A = "01-weighted-sum"
CELLS = ["softmax", "weighted_average", "dot_scores", "cosine_scores", "gaussian_scores", "attention_pool",
         "nadaraya_watson", "temperature", "bandwidth"]
SIGNATURES = {
    "softmax": "def softmax(x, axis=-1):",
    "weighted_average": "def weighted_average(weights, values):",
    "dot_scores": "def dot_scores(queries, keys):",
    "cosine_scores": "def cosine_scores(queries, keys):",
    "gaussian_scores": "def gaussian_scores(queries, keys, bandwidth):",
    "attention_pool": "def attention_pool(queries, keys, values, score_fn):",
    "nadaraya_watson": "def nadaraya_watson(x_query, x_train, y_train, bandwidth):",
}
FLOAT = "⟨float¦np.float64¦np.double⟩"
# Bodies written as students write them, each with choice points ⟨a¦b¦...⟩ resolved per student.
TEMPLATES = {
    "softmax": [
        f"""x = np.asarray(x, dtype={FLOAT})
top = ⟨x.max(axis=axis, keepdims=True)¦np.max(x, axis=axis, keepdims=True)¦np.amax(x, axis=axis, keepdims=True)⟩
top[~np.isfinite(top)] = ⟨0¦0.0⟩
ex = np.exp(x - top)
s = ⟨ex.sum(axis=axis, keepdims=True)¦np.sum(ex, axis=axis, keepdims=True)⟩
s[s == 0] = 1
return ex / s""",
        f"""arr = np.array(x, dtype={FLOAT})
peak = ⟨np.amax(arr, axis=axis, keepdims=True)¦arr.max(axis=axis, keepdims=True)⟩
peak = np.nan_to_num(peak, neginf=0.0)
num = np.exp(arr - peak)
den = ⟨num.sum(axis=axis, keepdims=True)¦np.sum(num, axis=axis, keepdims=True)⟩
⟨safe = np.where(den > 0, den, 1.0)
return num / safe¦return np.divide(num, den, out=np.zeros_like(num), where=den != 0)⟩""",
        f"""x = np.asarray(x, dtype={FLOAT})
dead = np.all(np.isneginf(x), axis=axis, keepdims=True)
shifted = x - np.max(np.where(dead, 0.0, x), axis=axis, keepdims=True)
w = np.exp(shifted)
⟨with np.errstate(invalid="ignore"):
    w = w / np.sum(w, axis=axis, keepdims=True)¦w = w / np.maximum(w.sum(axis=axis, keepdims=True), 1e-300)⟩
return np.where(dead, 0.0, w)""",
    ],
    "weighted_average": [
        f"""w = np.asarray(weights, dtype={FLOAT})
v = np.asarray(values, dtype={FLOAT})
return ⟨np.dot(w, v)¦np.matmul(w, v)¦w @ v⟩""",
        """result = 0
for j in range(len(values)):
    result = result + ⟨weights[..., j, None]¦np.asarray(weights)[..., j:j + 1]⟩ * values[j]
return result""",
    ],
    "dot_scores": [
        "return ⟨np.dot(queries, keys.T)¦np.matmul(queries, np.transpose(keys))¦queries.dot(keys.T)⟩",
        "return (⟨queries[:, None, :]¦queries[:, np.newaxis, :]⟩ * keys[None, :, :]).sum(⟨-1¦axis=-1¦axis=2⟩)",
    ],
    "cosine_scores": [
        """qn = np.linalg.norm(queries, axis=⟨-1¦1⟩, keepdims=True)
kn = np.linalg.norm(keys, axis=⟨-1¦1⟩, keepdims=True)
q = np.divide(queries, qn, out=np.zeros_like(queries, dtype=float), where=qn > 0)
k = np.divide(keys, kn, out=np.zeros_like(keys, dtype=float), where=kn > 0)
return ⟨q @ k.T¦np.dot(q, k.T)⟩""",
        """dots = ⟨np.einsum("md,nd->mn", queries, keys)¦queries @ keys.T⟩
lengths = np.outer(np.sqrt((queries ** 2).sum(⟨1¦axis=1⟩)), np.sqrt((keys ** 2).sum(⟨1¦axis=1⟩)))
safe = np.where(lengths == 0, 1, lengths)
return np.where(lengths == 0, ⟨0¦0.0⟩, dots / safe)""",
    ],
    "gaussian_scores": [
        """diff = ⟨queries[:, None, :] - keys[None, :, :]¦np.expand_dims(queries, 1) - np.expand_dims(keys, 0)⟩
return -⟨np.sum(diff ** 2, axis=-1)¦(diff * diff).sum(-1)⟩ / (2 * bandwidth ** 2)""",
        """sq = np.square(np.linalg.norm(queries[:, np.newaxis] - keys[np.newaxis], axis=⟨2¦-1⟩))
return -sq / ⟨(2.0 * bandwidth * bandwidth)¦(2 * bandwidth ** 2)⟩""",
    ],
    "attention_pool": [
        """s = score_fn(queries, keys)
w = softmax(s⟨¦, axis=-1⟩)
⟨out = w @ values
return out, w¦return weighted_average(w, values), w⟩""",
    ],
    "nadaraya_watson": [
        """⟨kernel = lambda q, k: gaussian_scores(q, k, bandwidth)
¦⟩out, _ = attention_pool(x_query.reshape(-1, 1), x_train.reshape(-1, 1), y_train.reshape(-1, 1), ⟨kernel¦lambda q, k: gaussian_scores(q, k, bandwidth)⟩)
return out.reshape(-1)""",
        """d = ⟨x_query[:, None] - x_train[None, :]¦np.subtract.outer(x_query, x_train)⟩
w = softmax(-d ** 2 / (2 * bandwidth ** 2)⟨¦, axis=-1⟩)
return ⟨w @ y_train¦np.dot(w, y_train)⟩""",
    ],
    "temperature": [
        """best = scores.max()
ties = (scores == best).astype(float)
limit_cold = ties / ties.sum()
limit_hot = ⟨np.ones_like(scores) / scores.size¦np.full(len(scores), 1 / len(scores))⟩
weights_by_temperature = ⟨np.array([softmax(scores / T) for T in temperatures])¦np.stack([softmax(scores / T) for T in temperatures])⟩""",
    ],
    "bandwidth": [
        """validation_mse = np.zeros(len(candidate_bandwidths))
for i, h in enumerate(candidate_bandwidths):
    pred = nadaraya_watson(x_val, x_fit, y_fit, h)
    validation_mse[i] = ⟨np.mean((pred - y_val) ** 2)¦((pred - y_val) ** 2).mean()⟩
chosen_bandwidth = ⟨candidate_bandwidths[np.argmin(validation_mse)]¦float(candidate_bandwidths[validation_mse.argmin()])⟩""",
    ],
}
NAMES = ["tmp", "val", "res", "out2", "acc", "buf", "arr2", "m2", "z", "u", "part", "step", "cur", "alpha", "beta"]
COMMENTS = ["# compute this step by step", "# careful with the shapes here", "# normalise", "# TODO check edge case",
            "# this took me a while", "# broadcasting does the work", "# see the book's chapter 1"]
def resolve(template: str, rng: random.Random) -> str:
    """The template with each choice point ⟨a¦b¦...⟩ (innermost first) replaced by one of its options."""
    pattern = re.compile(r"⟨([^⟨⟩]*)⟩")
    while "⟨" in template:
        template = pattern.sub(lambda m: rng.choice(m.group(1).split("¦")), template)
    return template


def as_cell(grade_id: str, body: str) -> str:
    """The body as a whole answer cell: inside its function (indented under the signature), or as is."""
    if grade_id not in SIGNATURES:
        return body
    return SIGNATURES[grade_id] + "\n" + "\n".join("    " + line if line else "" for line in body.splitlines())


def honest_style(source: str, rng: random.Random) -> str:
    """A student's own habits: their variable names, comments, returns through a variable, a check or conversion of
    the first argument of their own."""
    names = local_names(source)
    if names and rng.random() < 0.7:
        pool = rng.sample(NAMES, len(NAMES))
        source = rename(source, {n: pool[i % len(pool)] + ("" if i < len(pool) else str(i)) for i, n in enumerate(names)})
    lines = source.splitlines()
    if rng.random() < 0.3:
        lines = [re.sub(r"^(\s*)return (.+)$", r"\1result = \2\n\1return result", line) if "return" in line
                 and "," not in line else line for line in lines]
    signature = re.match(r"def \w+\((\w+)", lines[0]) if lines else None
    if signature and rng.random() < 0.4:  # (their own checks and conversions first: each student has some)
        first = signature.group(1)
        habit = rng.choice([f"{first} = np.asarray({first}, dtype=float)", f"{first} = np.array({first})",
                            f"assert np.ndim({first}) >= 1", f"shape = np.shape({first})",
                            f"if len({first}) == 0:\n        return {first}", f"{first} = {first} * 1.0"])
        lines[1:1] = [("        " if i else "    ") + line.strip() for i, line in enumerate(habit.split("\n"))]
    if rng.random() < 0.5:
        at = rng.randrange(1, len(lines) + 1) if len(lines) > 1 else len(lines)
        indent = re.match(r"\s*", lines[at - 1]).group() if at - 1 < len(lines) and lines[at - 1].startswith(" ") else \
            ("    " if lines[0].startswith("def ") else "")
        lines.insert(at, indent + rng.choice(COMMENTS))
    return "\n".join(lines)


def honest_pools() -> dict[str, list[str]]:
    """Every correct way to write each cell: the alternatives' files, the reference, the templates."""
    reference = {c.metadata["nbgrader"]["grade_id"]: c.source for c in completed_notebook(A).cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    pools = {}
    for grade_id in CELLS:
        files = sorted((REPO / "tests" / "alternatives" / A / grade_id).glob("*.py"))
        pools[grade_id] = [reference[grade_id]] + [p.read_text() for p in files] + \
            [(grade_id, t) for t in TEMPLATES.get(grade_id, [])]
    return pools


def honest_answers(pools: dict, rng: random.Random) -> dict[str, str]:
    """One honest student's answer cells (a few left unanswered)."""
    answers = {}
    for grade_id in CELLS:
        if rng.random() < 0.05:
            continue  # left as released
        way = rng.choice(pools[grade_id])
        code = as_cell(way[0], resolve(way[1], rng)) if isinstance(way, tuple) else way
        answers[grade_id] = honest_style(code, rng)
    return answers


def disguise(answers: dict[str, str], how: str, rng: random.Random, own: dict[str, str]) -> dict[str, str]:
    """A copy of `answers` disguised `how`; `own` are the copier's own answers (for a partial copy)."""
    copied = dict(answers)
    if how in ("renamed", "everything", "reference renamed"):
        for grade_id, code in copied.items():
            names = local_names(code)
            copied[grade_id] = rename(code, {n: f"my_{n}_{rng.randrange(10)}" for n in names})
    if how in ("comments", "everything"):
        copied = {g: "\n".join(line + ("  # " + rng.choice(["ok", "works", "done", "from lecture"])
                                       if line.strip() and rng.random() < 0.4 and not line.rstrip().endswith(":")
                                       else "") + ("\n" if rng.random() < 0.3 else "")
                               for line in code.splitlines()) for g, code in copied.items()}
    if how in ("constants", "everything"):
        copied = {g: code.replace("0.0", "0.").replace("2.0", "2.").replace("1e-12", "1e-9").replace(", 1)", ", 1.0)")
                  for g, code in copied.items()}
    if how in DISGUISES:
        copied = DISGUISES[how](copied)
    if how in ("partial", "two cells"):
        kept = set(rng.sample(sorted(copied), min(5 if how == "partial" else 2, len(copied))))
        copied = {g: (copied[g] if g in kept else own.get(g, "")) for g in CELLS if g in kept or g in own}
    return copied


# ---------------------------------------------------------------------------------------------------------------
# Disguises that change the code rather than its spelling (each keeps the answers correct): numpy under another
# name, locals renamed to builtin names, independent lines swapped, dead code added, comprehensions written as loops.

def _bound_and_read(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """The names a statement may change (assigned, or whose methods it calls) and every name it mentions."""
    names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.Expr):
        return names, names  # (a call may change what it is given)
    changed = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for target in getattr(stmt, "targets", [getattr(stmt, "target", None)]):
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
            if isinstance(target, ast.Name):
                changed.add(target.id)
    return changed, names


def aliased(answers: dict[str, str], alias: str = "xp") -> dict[str, str]:
    """numpy imported as `alias` in the first answer cell, and called by that name in every cell."""
    out = {g: re.sub(r"\bnp\.", f"{alias}.", code) for g, code in answers.items()}
    first = next(iter(out))
    out[first] = f"import numpy as {alias}\n" + out[first]
    return out


BUILTINS = ["input", "id", "iter", "format", "hash", "vars", "filter", "next", "object", "map", "slice", "open"]


def builtin_locals(answers: dict[str, str]) -> dict[str, str]:
    """Each cell's local variables (not its parameters) renamed to builtin names the cell does not use."""
    out = {}
    for g, code in answers.items():
        parameters = {a.arg for a in ast.walk(ast.parse(code)) if isinstance(a, ast.arg)}
        free = [b for b in BUILTINS if not re.search(rf"\b{b}\b", code)]
        names = [n for n in local_names(code) if n not in parameters]
        out[g] = rename(code, dict(zip(names, free)))
    return out


def swapped(answers: dict[str, str]) -> dict[str, str]:
    """In each block, adjacent assignments that neither read nor change what the other changes, swapped."""
    out = {}
    for g, code in answers.items():
        lines = code.splitlines()
        for node in ast.walk(ast.parse(code)):
            body = getattr(node, "body", None)
            if not isinstance(body, list):
                continue
            i = 0
            while i + 1 < len(body):
                a, b = body[i], body[i + 1]
                (changed_a, read_a), (changed_b, read_b) = _bound_and_read(a), _bound_and_read(b)
                if isinstance(a, (ast.Assign, ast.AugAssign)) and isinstance(b, (ast.Assign, ast.AugAssign)) \
                        and not changed_a & read_b and not changed_b & read_a:
                    first, second = lines[a.lineno - 1:a.end_lineno], lines[b.lineno - 1:b.end_lineno]
                    lines[a.lineno - 1:b.end_lineno] = second + lines[a.end_lineno:b.lineno - 1] + first
                    i += 2
                else:
                    i += 1
        out[g] = "\n".join(lines) + "\n"
    return out


DEAD = ["unused = np.zeros(3)", "debug = False", "spare = np.ones((2, 2)).sum()", "note = 'checked'",
        "previous = None", "scale_check = np.float64(1.0) * 2"]


def dead_code(answers: dict[str, str]) -> dict[str, str]:
    """A line whose value is never used at the top of each answer (after the docstring) and an ``if False:`` block
    before its last statement."""
    out = {}
    for n, (g, code) in enumerate(answers.items()):
        tree = ast.parse(code)
        defs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
        body = defs[-1].body if defs else tree.body
        lines = code.splitlines()
        indent = " " * body[-1].col_offset
        last = body[-1].lineno - 1
        lines[last:last] = [f"{indent}if False:", f'{indent}    print("checking the shapes")']
        documented = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        at = body[0].end_lineno if documented else body[0].lineno - 1
        lines[at:at] = [indent + DEAD[n % len(DEAD)]]
        out[g] = "\n".join(lines) + "\n"
    return out


def as_loops(answers: dict[str, str]) -> dict[str, str]:
    """Every ``name = wrap([expr for t in items])`` on one line written as a loop that appends to a list."""
    pattern = re.compile(r"^(\s*)(\w+) = ([\w.]+)\(\[(.+) for (\w+) in (\w+)\]\)$", re.M)
    return {g: pattern.sub(r"\1rows = []\n\1for \5 in \6:\n\1    rows.append(\4)\n\1\2 = \3(rows)", code)
            for g, code in answers.items()}


def all_disguises(answers: dict[str, str]) -> dict[str, str]:
    """Every disguise above at once."""
    return aliased(builtin_locals(swapped(as_loops(dead_code(answers)))))


DISGUISES = {"aliases": aliased, "builtin names": builtin_locals, "lines swapped": swapped, "dead code": dead_code,
             "loops": as_loops, "all disguises": all_disguises}


def copy_cells(source: dict[str, str], own: dict[str, str], cells: list[str]) -> dict[str, str]:
    """A student's `own` answers but for `cells`, copied whole from `source`."""
    return {g: source[g] if g in cells else own[g] for g in CELLS if g in own or g in cells}


# ---------------------------------------------------------------------------------------------------------------
# The disguised class (--disguises; tests/unit/pages/test_similarity.py asserts on it): copies of the reference with each
# disguise, three honest students answering in the independent alternatives of tests/alternatives/, and pat, who
# copies two of ann's nine cells whole and writes the rest (the first template of each cell).

ANN = {"softmax": "logsumexp", "weighted_average": "einsum", "dot_scores": "loops", "cosine_scores": "where_division",
       "gaussian_scores": "loops", "attention_pool": "inline_softmax_einsum", "nadaraya_watson": "direct_kernel",
       "temperature": "ties_by_count", "bandwidth": "loop_and_min"}
BOB = {"softmax": "float32_nan_to_num", "weighted_average": "broadcast_sum", "dot_scores": "einsum",
       "cosine_scores": "clamped_norms_float32", "gaussian_scores": "expanded_square", "attention_pool": "per_query_loop",
       "nadaraya_watson": "keywords_and_newaxis", "temperature": "extreme_temperatures",
       "bandwidth": "smoothest_near_best"}
CY = {"softmax": "loop_over_rows_with_own_warning", "weighted_average": "float32_tensordot",
      "nadaraya_watson": "float32", "temperature": "written_out_and_loop"}  # (the alternatives left: four cells)
COPIED = ["softmax", "nadaraya_watson"]  # the two cells pat copies from ann
HONEST = [("ann", "bob"), ("ann", "cy"), ("ann", "reference"), ("bob", "cy"), ("bob", "reference"),
          ("cy", "reference"), ("bob", "pat"), ("cy", "pat"), ("pat", "reference")]


def alternatives(chosen: dict[str, str]) -> dict[str, str]:
    """The answers of tests/alternatives/ chosen by name per grade id."""
    return {g: (REPO / "tests" / "alternatives" / A / g / f"{name}.py").read_text() for g, name in chosen.items()}


def reference_answers() -> dict[str, str]:
    """The reference solution's answer cells (as the solution notebook has them), by grade id."""
    from autograde.course import source_notebook
    from autograde.reference import solution_code

    return {c.metadata["nbgrader"]["grade_id"]: solution_code(c.source) for c in source_notebook(A).cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def disguised_class(folder: Path) -> dict[str, Path]:
    """Write the disguised class into `folder`; returns each student's notebook."""
    rng = random.Random(1)
    own = {g: as_cell(g, resolve(TEMPLATES[g][0], rng)) for g in CELLS}
    ann = alternatives(ANN)
    students = {"ann": ann, "bob": alternatives(BOB), "cy": alternatives(CY), "pat": copy_cells(ann, own, COPIED)}
    reference = reference_answers()
    students |= {name: disguise(reference) for name, disguise in DISGUISES.items()}
    return {s: write_submission(notebook(answers, False, rng), folder, s, A) for s, answers in students.items()}


def report_disguised_class() -> None:
    """Print each disguised copy's similarity to the reference, the honest pairs', pat's with ann, and the copied
    cells found."""
    from autograde.pages.similarity import compare, copied_cells, read_answers

    with tempfile.TemporaryDirectory() as scratch:
        authors = read_answers(A, disguised_class(Path(scratch)))
    scores = {frozenset((p.a, p.b)): p.similarity for p in compare(A, authors, threshold=0.0, min_tokens=0)}
    for name in DISGUISES:
        print(f"{name} (a copy of the reference): {scores.get(frozenset((name, 'reference')), 0.0):.3f}")
    print("honest pairs: " + ", ".join(f"{a}-{b} {scores.get(frozenset((a, b)), 0.0):.3f}" for a, b in HONEST))
    print(f"pat, who copies {' and '.join(COPIED)} of ann's nine cells: {scores.get(frozenset(('ann', 'pat')), 0.0):.3f}")
    for c in copied_cells(authors):
        print(f"copied cell: {c.a}'s {c.label_a} ~ {c.b}'s {c.label_b}: {c.tokens} tokens, {c.share:.0%} in runs both "
              f"have, {c.alone:.0%} in runs no third student, nor the book, has")


def notebook(answers: dict[str, str], reorder: bool, rng: random.Random):
    """The released notebook with `answers` in its answer cells; with `reorder`, its cells shuffled."""
    nb = student_notebook(A)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    if reorder:
        rng.shuffle(nb.cells)
    return nb


KINDS = ["verbatim", "renamed", "reordered", "comments", "constants", "everything", "partial", "reference renamed",
         *DISGUISES, "two cells"]


def make_class(folder: Path, students: int, copies: int, seed: int) -> tuple[set[frozenset], dict[str, str]]:
    """Write the class into `folder`; returns the pairs that are copies (frozensets of two ids, or of an id and
    'reference') and each copier's kind of disguise."""
    rng = random.Random(seed)
    pools = honest_pools()
    reference = {c.metadata["nbgrader"]["grade_id"]: c.source for c in completed_notebook(A).cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    honest = students - copies
    answers = {f"s{i:03d}": honest_answers(pools, rng) for i in range(honest)}
    for student, own in answers.items():
        write_submission(notebook(own, False, rng), folder, student, A)
    truth, kinds, sources = set(), {}, {}
    for n in range(copies):
        copier, how = f"c{n:03d}", KINDS[n % len(KINDS)]
        source = "reference" if how == "reference renamed" else (
            sources[f"c{n - 1:03d}"] if n % 10 == 9 and sources.get(f"c{n - 1:03d}") not in (None, "reference")
            else f"s{rng.randrange(honest):03d}")
        sources[copier], kinds[copier] = source, how
        original = reference if source == "reference" else answers[source]
        copied = disguise(original, how, rng, honest_answers(pools, rng))
        write_submission(notebook(copied, how in ("reordered", "everything"), rng), folder, copier, A)
        truth.add(frozenset({copier, source}))
    # Two copiers of one source are copies of each other too.
    for c1 in sources:
        for c2 in sources:
            if c1 < c2 and sources[c1] == sources[c2]:
                truth.add(frozenset({c1, c2}))
    return truth, kinds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="write the class and the report here, and keep them")
    parser.add_argument("--disguises", action="store_true", help="measure the disguised class instead (a copy of the "
                        "reference per disguise, honest students of tests/alternatives/, a copy of two cells)")
    args = parser.parse_args(argv)
    if args.disguises:
        report_disguised_class()
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        submitted, out = root / "submitted", root / "out"
        out.mkdir(parents=True, exist_ok=True)
        truth, kinds = make_class(submitted, args.students, args.copies, args.seed)
        notebooks = {(p.parent.parent.name, A): p for p in sorted(submitted.glob(f"*/{A}/{A}.ipynb"))}
        settings = Similarity() if args.threshold is None else Similarity(threshold=args.threshold)
        times, cpu = [], []
        for _ in range(args.repeat):
            started, used = time.perf_counter(), time.process_time()
            write_similarity(notebooks, [A], out, settings)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)  # (on a shared machine the wall clock measures the others too)
        with open(out / "similarity.csv", newline="") as f:
            rows = list(csv.DictReader(f))
    flagged = {frozenset({r["student_a"], r["student_b"]}): r for r in rows}
    copiers = sorted(kinds)
    print(f"{args.students} students ({args.copies} copiers), threshold {settings.threshold:.0%}, "
          f"min_tokens {settings.min_tokens}")
    found = truth & set(flagged)
    print(f"copies found: {len(found)} of {len(truth)} copied pairs")
    for copier in copiers:
        pairs = [p for p in truth if copier in p]
        hits = [p for p in pairs if p in flagged]
        shown = ", ".join(f"{'/'.join(sorted(p - {copier}))} {float(flagged[p]['similarity']):.0%}"
                          + (f" cells {flagged[p]['copied_cells']}" if flagged[p]["copied_cells"] else "") for p in hits)
        print(f"  {copier} ({kinds[copier]}): {len(hits)} of {len(pairs)}" + (f" [{shown}]" if shown else ""))
    false = {p: r for p, r in flagged.items() if p not in truth}
    honest_pairs = [p for p, r in false.items() if r["kind"] == "student" and not any(s.startswith("c") for s in p)]
    against = [p for p, r in false.items() if r["kind"] != "student"]
    n_honest = args.students - args.copies
    print(f"honest pairs flagged: {len(honest_pairs)} of {n_honest * (n_honest - 1) // 2} pairs of honest students; "
          f"{sum(1 for p, r in false.items() if r['kind'] == 'student') - len(honest_pairs)} pairs of a copier with "
          "an honest student not their source")
    print(f"honest students flagged against the reference or the book: {len(against)}")
    for cut in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        if cut >= settings.threshold:
            at = {p for p, r in flagged.items() if float(r["similarity"]) >= cut - 1e-9}
            print(f"  at {cut:.0%}: copies found {len(truth & at)} of {len(truth)}; pairs of students that are no "
                  f"copy flagged {sum(1 for p in at - truth if flagged[p]['kind'] == 'student')}, against the reference or book "
                  f"{sum(1 for p in at - truth if flagged[p]['kind'] != 'student')}")
    by_cell = {p: r for p, r in flagged.items() if r["copied_cells"] and float(r["similarity"]) < settings.threshold}
    print(f"listed for a copied cell only (under the threshold): {len(truth & set(by_cell))} copied pairs, "
          f"{sum(1 for p in by_cell if p not in truth)} others; copied cells reported for "
          f"{sum(1 for p, r in false.items() if r['copied_cells'])} pairs that are no copy")
    for p in sorted(false, key=lambda p: -float(false[p]["similarity"]))[:10]:
        r = false[p]
        print(f"  {r['student_a']} ~ {r['student_b']} ({r['kind']}): {float(r['similarity']):.0%}, "
              f"{r['matched_tokens']} tokens, {r['matched_cells']}; copied cells: {r['copied_cells'] or '-'}")
    print(f"similarity step for {len(notebooks)} notebooks: best of {args.repeat}: {min(times):.2f} s "
          f"(all: {', '.join(f'{t:.2f}' for t in times)}); processor time {min(cpu):.2f} s")


if __name__ == "__main__":
    main()
