"""What no student-facing page may show: solution and hidden-test lines, and answers in any form.

Two checks. `secret_lines` is exact: stripped lines of solutions and hidden tests. `code_leaks` is on tokens:
it finds the code of a book page (every code cell, hidden or removed ones too, since the download button serves
the page's source) that repeats a graded answer with other names, other numbers or a reshape added or removed.
"""
from __future__ import annotations

import builtins
import functools
import io
import keyword
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from autograde.course import REPO, assignment_ids, source_notebook

SECRET_BLOCK = re.compile(r"### BEGIN (?:SOLUTION|HIDDEN TESTS)\n(.*?)### END (?:SOLUTION|HIDDEN TESTS)", re.S)
SOLUTION_BLOCK = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
ALTERNATIVES = REPO / "tests" / "alternatives"


@functools.cache
def public_lines() -> frozenset[str]:
    """Stripped lines that some source shows students anyway (outside solutions and hidden tests)."""
    return frozenset(line.strip() for a in assignment_ids() for cell in source_notebook(a).cells
                     for line in SECRET_BLOCK.sub("", cell.source).splitlines())


def secret_lines(assignment: str) -> list[str]:
    """Non-trivial lines of solution code and hidden tests in the source of `assignment`."""
    lines = [line.strip() for cell in source_notebook(assignment).cells
             for block in SECRET_BLOCK.findall(cell.source) for line in block.splitlines()]
    # Short lines ("return out"), imports, random generators and lines students see elsewhere give nothing away.
    public = public_lines()
    boilerplate = re.compile(r"^(#|import |from \S+ import |rng = np\.random\.default_rng\(\d+\)$)")
    return [line for line in lines if len(line) >= 25 and not boilerplate.match(line) and line not in public]


# ---------------------------------------------------------------------------------------------------------------
# The check on tokens.
#
# Code is tokenised with Python's `tokenize` and normalised so that what a copy changes does not matter:
# comments and layout go; every number is <num> and every string <str>; `self.` goes (an attribute of the object
# is one of its variables); reshapes that only add or remove an axis (`[:, None, :]`, `[:, 0]`, `.unsqueeze(1)`,
# `.squeeze(-1)`) go. Names the author chose (variables, parameters, functions) match by a consistent renaming
# within a window ("parameterised" matching: `a + a` matches `x + x`, not `x + y`); names the author did not choose
# stay literal: keywords, builtins, the libraries' aliases, attributes (`np.exp`, `.max`) and keyword arguments.
#
# A page leaks an answer when its code and the answer share
#   - a stretch of at least LONG_RUN tokens, MIN_SUBSTANCE of which do something (operations, attributes, library
#     calls, keyword arguments, numbers: shared control flow such as `for i in range(len(rows)):` is no answer), or
#   - runs of at least SHORT_RUN tokens that cover at least COVERAGE of the answer's tokens (the page holds most of
#     an answer of a line or two, such as a mask or the wiring of a call).
# Windows that the exercise notebooks show students anyway (instructions, given code, visible tests, in notebooks
# up to the answer's own chapter) do not count.
#
# Calibration (the pages as issue 19 found them, commit 9ebebca, and as they are now): with 20 / 10 / 0.6 / 5 the
# six cases of tests/course/test_book.py::ISSUE_19_CASES are all caught on the old pages, with 8 further stretches that
# were leaks too (fixed), and the current pages pass. LONG_RUN 16-20, SHORT_RUN 8-12 and COVERAGE 0.6-0.7 give the
# same verdicts; LONG_RUN 24 misses chapter 3's and chapter 4's NumPy attention; COVERAGE 0.5 flags chapter 2's
# `decode(inputs, encoded, encoded)`; without the substance rule, 7 stretches of shared loops and random inputs.
# ---------------------------------------------------------------------------------------------------------------

LONG_RUN = 20
SHORT_RUN = 10
COVERAGE = 0.6
MIN_SUBSTANCE = 5
LIBRARIES = frozenset({"np", "numpy", "torch", "nn", "F", "math", "plt", "functional"})
LITERAL = frozenset(dir(builtins)) | LIBRARIES
_LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
           tokenize.ENDMARKER}
_AXIS_ONLY = frozenset({":", ",", "None", "...", "-"})


@dataclass(frozen=True)
class Token:
    """A normalised token: `text` is compared literally; `name`, when set, is matched by consistent renaming."""

    text: str
    name: str | None
    line: int


def _raw_tokens(source: str) -> list[tokenize.TokenInfo]:
    """Python tokens of `source` without layout; lines are dedented first (solution regions sit inside functions)."""
    text = "\n".join(line.strip() for line in source.splitlines()) + "\n"
    tokens = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in _LAYOUT:
                tokens.append(token)
    except tokenize.TokenError:  # an unclosed bracket at the end: keep what came before
        pass
    return tokens


def _without_self_and_reshapes(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    """Drop `self.` and the subscripts and calls that only add or remove an axis."""
    kept, i = [], 0
    while i < len(tokens):
        t = tokens[i]
        if t.string == "self" and i + 1 < len(tokens) and tokens[i + 1].string == ".":
            i += 2
            continue
        if t.string == "[" and kept and (kept[-1].type == tokenize.NAME or kept[-1].string in ")]"):
            j = i + 1
            while j < len(tokens) and (tokens[j].string in _AXIS_ONLY or tokens[j].type == tokenize.NUMBER):
                j += 1
            inside = [tokens[k].string for k in range(i + 1, j)]
            if j < len(tokens) and tokens[j].string == "]" and (
                    "None" in inside or (":" in inside and any(tokens[k].type == tokenize.NUMBER for k in range(i + 1, j)))):
                i = j + 1  # [:, None, :], [None], [:, 0], [..., 0]: an axis added or taken, no data chosen
                continue
        if (t.string == "." and i + 2 < len(tokens) and tokens[i + 1].string in ("unsqueeze", "squeeze")
                and tokens[i + 2].string == "("):
            j = i + 3
            while j < len(tokens) and tokens[j].string != ")":
                j += 1
            i = j + 1
            continue
        kept.append(t)
        i += 1
    return kept


def code_tokens(source: str, first_line: int = 1) -> list[Token]:
    """The normalised tokens of Python `source` (see the comment above); `line` counts from `first_line`."""
    raw = _without_self_and_reshapes(_raw_tokens(source))
    tokens, depth = [], 0
    for i, t in enumerate(raw):
        line = first_line + t.start[0] - 1
        depth += (t.string in "([{") - (t.string in ")]}") if t.type == tokenize.OP else 0
        if t.type == tokenize.NUMBER:
            tokens.append(Token("<num>", None, line))
        elif t.type == tokenize.STRING:
            tokens.append(Token("<str>", None, line))
        elif t.type != tokenize.NAME or keyword.iskeyword(t.string):
            tokens.append(Token(t.string, None, line))
        else:
            attribute = i > 0 and raw[i - 1].string == "."
            keyword_argument = depth > 0 and i + 1 < len(raw) and raw[i + 1].string == "="
            literal = attribute or keyword_argument or t.string in LITERAL
            tokens.append(Token(t.string, None, line) if literal else Token("<name>", t.string, line))
    return tokens


def _shape(window: list[Token]) -> tuple[str, ...]:
    """A window's tokens with the chosen names numbered by first appearance: equal shapes match by renaming."""
    numbers: dict[str, int] = {}
    return tuple(t.text if t.name is None else f"<name{numbers.setdefault(t.name, len(numbers))}>" for t in window)


def _shapes(tokens: list[Token], n: int) -> list[tuple[str, ...]]:
    return [_shape(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


@dataclass(frozen=True, eq=False)  # (hashed by identity: answers() makes each once, and hashing its tokens cost more
class Answer:                       # than the check itself)
    """A graded answer in one form: a solution region of the source, or a correct alternative from tests/."""

    assignment: str
    label: str
    tokens: tuple[Token, ...]


# Answers of NumPy exercises as PyTorch writes them: (parameters, body), the body being what a solution region
# holds. Token matching cannot see through a change of primitives (a loop over differences and torch.cdist share
# no run), so these forms are listed; each is checked equal to the reference answer
# (tests/course/test_book.py::test_other_framework_forms_are_answers).
OTHER_FRAMEWORK = {
    "01-weighted-sum": {
        "gaussian_scores": (("queries", "keys", "bandwidth"), """
return -torch.cdist(queries, keys) ** 2 / (2 * bandwidth**2)
"""),
        "nadaraya_watson": (("x_query", "x_train", "y_train", "bandwidth"), """
distance = torch.cdist(x_query[:, None], x_train[:, None])
weights = torch.softmax(-(distance**2) / (2 * bandwidth**2), dim=-1)
return weights @ y_train
"""),
    },
    "03-self-attention": {
        "causal_mask": (("n",), """
return torch.tril(torch.ones(n, n, dtype=torch.bool))
"""),
    },
}


@functools.cache
def answers(assignment: str) -> tuple[Answer, ...]:
    """Every known form of the answers of `assignment`: solution regions, correct alternatives, other frameworks."""
    found = []
    for cell in source_notebook(assignment).cells:
        for index, block in enumerate(SOLUTION_BLOCK.findall(cell.source)):
            label = f"{assignment} solution {cell.id}" + (f" (part {index + 1})" if index else "")
            found.append(Answer(assignment, label, tuple(code_tokens(block))))
    for path in sorted((ALTERNATIVES / assignment).glob("*/*.py")):
        found.append(Answer(assignment, f"{assignment} alternative {path.parent.name}/{path.name}",
                            tuple(code_tokens(path.read_text()))))
    for name, (_, body) in OTHER_FRAMEWORK.get(assignment, {}).items():
        found.append(Answer(assignment, f"{assignment} {name} in PyTorch", tuple(code_tokens(body))))
    return tuple(found)


_MARKDOWN_CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)


@functools.cache
def public_shapes(assignment: str, n: int) -> frozenset[tuple[str, ...]]:
    """The n-token shapes that the exercise notebooks up to `assignment`'s show anyway (outside solutions and hidden tests)."""
    ids = assignment_ids()
    shapes: set[tuple[str, ...]] = set()
    for earlier in ids[:ids.index(assignment) + 1]:
        for cell in source_notebook(earlier).cells:
            shown = SECRET_BLOCK.sub("", cell.source)
            pieces = [shown] if cell.cell_type == "code" else [f or i for f, i in _MARKDOWN_CODE.findall(shown)]
            for piece in pieces:
                shapes.update(_shapes(code_tokens(piece), n))
    return frozenset(shapes)


@dataclass(frozen=True)
class CodeBlock:
    """Code shown on a page: a code cell (whatever its tags) or a fenced Python block, from line `line`."""

    line: int
    source: str
    tags: tuple[str, ...]
    code_cell: bool


_CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_FENCED_PYTHON = re.compile(r"^```(?:python|ipython3?|py)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def page_code(page: Path) -> list[CodeBlock]:
    """Every code cell of a MyST page (hidden and removed ones too) and every fenced Python block."""
    text = page.read_text()
    blocks = []
    matches = [(m, True) for m in _CODE_CELL.finditer(text)] + [(m, False) for m in _FENCED_PYTHON.finditer(text)]
    for match, code_cell in matches:
        line = text.count("\n", 0, match.start(1)) + 1
        lines = match.group(1).split("\n")
        options = []
        if lines and lines[0].strip() == "---":  # YAML options block
            end = lines.index("---", 1)
            options, lines, line = lines[1:end], lines[end + 1:], line + end + 1
        else:
            while lines and lines[0].startswith(":"):  # short-form options
                options, lines, line = options + [lines[0][1:]], lines[1:], line + 1
        listed = re.search(r"tags:\s*\[([^\]]*)\]", "\n".join(options))
        tags = tuple(re.findall(r"[\w-]+", listed.group(1))) if listed else ()
        blocks.append(CodeBlock(line, "\n".join(lines), tags, code_cell))
    return sorted(blocks, key=lambda b: b.line)


@dataclass(frozen=True)
class Leak:
    """Page code that repeats an answer: where, which answer, and the shared tokens."""

    first_line: int
    last_line: int
    answer: str
    why: str
    tokens: str

    def __str__(self) -> str:
        return f"lines {self.first_line}-{self.last_line} repeat {self.answer} ({self.why}): {self.tokens}"


def _runs(hits: list[int], n: int) -> list[tuple[int, int]]:
    """Merge the starts of matching n-token windows into maximal runs [start, end)."""
    runs: list[tuple[int, int]] = []
    for start in hits:
        if runs and start <= runs[-1][1]:
            runs[-1] = (runs[-1][0], start + n)
        else:
            runs.append((start, start + n))
    return runs


def _shown(tokens: list[Token]) -> str:
    return " ".join(t.name or t.text for t in tokens)


_PUNCTUATION = frozenset("()[]{},.:=;") | {"->", "**=", "+=", "-=", "*=", "/="}
_CONTROL = frozenset({"for", "in", "if", "else", "elif", "while", "return", "def", "class", "lambda", "range", "len",
                      "enumerate", "zip", "list", "tuple", "dict", "with", "as", "not", "and", "or", "is"})


def _substance(tokens: list[Token]) -> int:
    """How many tokens do something: operations, attributes, library calls, keyword arguments, numbers, constants.

    Chosen names, punctuation and control flow (`for i in range(len(rows)):`) do not count.
    """
    return sum(t.name is None and t.text not in _PUNCTUATION and t.text not in _CONTROL for t in tokens)


@functools.cache
def _answer_shapes(answer: Answer) -> tuple[list[tuple[str, ...]], frozenset[tuple[str, ...]]]:
    """The SHORT_RUN-token shapes of `answer`, and those of them the notebooks do not show (computed once per answer:
    a page has dozens of code blocks, each compared with every answer)."""
    shapes = _shapes(list(answer.tokens), SHORT_RUN)
    return shapes, frozenset(shapes) - public_shapes(answer.assignment, SHORT_RUN)


def leaks_of(code: list[Token], answer: Answer, code_shapes: list[tuple[str, ...]] | None = None) -> list[Leak]:
    """Where `code` (the tokens of a page's code) repeats `answer`, by the two rules above; `code_shapes`, the
    SHORT_RUN-token shapes of `code`, when the caller has them already."""
    n = SHORT_RUN
    public = public_shapes(answer.assignment, n)
    answer_shapes, private_answer = _answer_shapes(answer)
    if code_shapes is None:
        code_shapes = _shapes(code, n)
    if private_answer.isdisjoint(code_shapes):  # (both rules need a window of the answer students have not seen)
        return []
    # Code positions inside a window that repeats the answer, less those inside a window the notebooks show anyway.
    matched, shown = set(), set()
    for i, shape in enumerate(code_shapes):
        if shape in private_answer:
            matched.update(range(i, i + n))
        elif shape in public:
            shown.update(range(i, i + n))
    found = []
    for start, end in _runs(sorted(i for i in matched - shown), 1):
        stretch = code[start:end]
        if end - start >= LONG_RUN and _substance(stretch) >= MIN_SUBSTANCE:
            found.append(Leak(stretch[0].line, stretch[-1].line, answer.label, f"{end - start} tokens in a row",
                              _shown(stretch)))
    # Coverage: how much of the answer the page's code holds, in windows students have not seen.
    in_code = set(code_shapes)
    covered = {j for i, shape in enumerate(answer_shapes) if shape in private_answer and shape in in_code
               for j in range(i, i + n)}
    if answer.tokens and len(covered) >= COVERAGE * len(answer.tokens) and not found:
        where = [i for i, shape in enumerate(code_shapes) if shape in private_answer]
        runs = _runs(where, n)
        found.append(Leak(code[runs[0][0]].line, code[runs[-1][1] - 1].line, answer.label,
                          f"{len(covered)} of its {len(answer.tokens)} tokens",
                          " | ".join(_shown(code[a:b]) for a, b in runs)))
    return found


def code_leaks(source: str, assignments: list[str] | None = None, first_line: int = 1) -> list[Leak]:
    """Every answer of `assignments` (default: all) that the Python `source` repeats, and where."""
    code = code_tokens(source, first_line)
    shapes = _shapes(code, SHORT_RUN)  # (once, not once per answer)
    return [leak for a in (assignments or assignment_ids()) for answer in answers(a)
            for leak in leaks_of(code, answer, shapes)]


def page_leaks(page: Path, assignments: list[str] | None = None) -> list[Leak]:
    """Every answer that some code of `page` repeats, cell by cell (a later page must import an earlier answer)."""
    return [leak for block in page_code(page) for leak in code_leaks(block.source, assignments, block.line)]
