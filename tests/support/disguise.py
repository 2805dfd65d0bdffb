"""Disguises of a copied answer, as copiers make them: names renamed where they are names. Test scaffolding, used by
tests/unit/pages/test_similarity.py and benchmarks/similarity_class.py."""
from __future__ import annotations

import io
import keyword
import re
import tokenize

# Names a copier keeps: the exercise's functions and the names the notebook gives or the tests read.
GIVEN_NAMES = {"scores", "temperatures", "candidate_bandwidths", "x_val", "y_val", "x_fit", "y_fit", "x_all", "y_all",
               "softmax", "weighted_average", "dot_scores", "cosine_scores", "gaussian_scores", "attention_pool",
               "nadaraya_watson", "limit_cold", "limit_hot", "weights_by_temperature", "validation_mse",
               "chosen_bandwidth", "np"}


def local_names(source: str) -> list[str]:
    """Names the cell assigns (not parameters, not the exercise's or the notebook's names), in order."""
    found = []
    for t in tokenize.generate_tokens(io.StringIO(source).readline):
        if t.type == tokenize.NAME and not keyword.iskeyword(t.string) and t.string not in found:
            found.append(t.string)
    assigned = set(re.findall(r"^\s*([A-Za-z_]\w*)\s*(?:,\s*[A-Za-z_]\w*\s*)*=[^=]", source, re.M))
    assigned |= set(re.findall(r"for\s+([A-Za-z_]\w*)", source)) | set(re.findall(r"lambda\s+(\w+)", source))
    assigned |= {n for m in re.findall(r"^\s*([\w, ]+)=[^=]", source, re.M) for n in re.findall(r"\w+", m)}
    assigned |= {n for m in re.findall(r"for\s+([\w, ]+)\s+in", source) for n in re.findall(r"\w+", m)}
    return [n for n in found if n in assigned and n not in GIVEN_NAMES and not n.isdigit()]


def rename(source: str, mapping: dict[str, str]) -> str:
    """`source` with the names of `mapping` renamed wherever they are names (not attributes, not keyword
    arguments)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    edits, depth = [], 0
    for i, t in enumerate(tokens):
        if t.type == tokenize.OP:
            depth += (t.string in "([{") - (t.string in ")]}")
        keyword_argument = depth > 0 and i + 1 < len(tokens) and tokens[i + 1].string == "="
        if t.type == tokenize.NAME and t.string in mapping and not keyword_argument and \
                not (i and tokens[i - 1].string == "."):
            edits.append((t.start, t.end, mapping[t.string]))
    for (row, col), (_, end), new in reversed(edits):
        lines[row - 1] = lines[row - 1][:col] + new + lines[row - 1][end:]
    return "".join(lines)
