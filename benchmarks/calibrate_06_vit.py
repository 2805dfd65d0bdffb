"""Calibrate the threshold of chapter 6's graded training (a ViT on scikit-learn's handwritten digits).

The hidden test `test_ViT_training` seeds torch with 0, builds the student's
`ViT(image_size=8, patch_size=4, channels=1, num_classes=10, d_model=32,
num_heads=4, num_layers=2)` (with the tests' own `patchify`, F.unfold), trains
it with the notebook's `train_digits` (6 epochs, seed 0) and requires a test
accuracy of at least ACCURACY_THRESHOLD on the fixed split (every fifth image
is a test image).

A student's ViT may differ from the reference in ways the instructions allow:
the order in which parameters are created (which changes the initial weights
drawn from the same seed), the initialisation of `cls_token` (zeros or
N(0, 0.02²)) and of `position_embedding` (N(0, 0.02²) or a truncated normal
with std 0.02), the patch embedding computed as a strided convolution with
`patch_embedding`'s weight, the class token's position added separately.
Every such variant must pass on every seed. Variants the instructions exclude
(unscaled N(0, 1) class token and positions, no positions, mean pooling instead
of the class token) are measured too and reported as "not required".

Usage (one thread per run, as in grading; --jobs runs seeds in parallel):

    .venv/bin/python -m benchmarks.calibrate_06_vit --seeds 20 --jobs 1

Measured (2026-12-02, seeds 0-19, test accuracy min / mean / max; 200 runs in 1,159 s at load about 7):

    reference                           0.906 / 0.939 / 0.967
    cls_token N(0, 0.02)                0.908 / 0.937 / 0.958
    truncated normal std 0.02           0.903 / 0.940 / 0.967
    reversed creation order             0.906 / 0.941 / 0.958
    blocks first                        0.908 / 0.944 / 0.969
    strided convolution                 0.906 / 0.939 / 0.967
    class token's position added apart  0.906 / 0.939 / 0.967
    (not required) N(0, 1) cls/positions 0.881 / 0.924 / 0.956; no positions 0.867 / 0.914 / 0.936;
                   mean pooling          0.914 / 0.933 / 0.956

The lowest accuracy of a required variant, 0.903, is 0.10 above the threshold 0.80. Training alone does not
separate the excluded variants (they are graded by the other cells of exercise 2: the hand-written forward pass).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ACCURACY_THRESHOLD = 0.80
CONFIG = dict(image_size=8, patch_size=4, channels=1, num_classes=10, d_model=32, num_heads=4, num_layers=2)

_ref = None


def reference():
    """The notebook's given code and reference solutions (loaded once per process), with the tests' patchify."""
    global _ref
    if _ref is None:
        import torch
        import torch.nn.functional as F

        from autograde.reference import load_reference

        torch.set_num_threads(1)
        _ref = load_reference("06-beyond-text", skip=("training_run",))
        _ref["patchify"] = lambda images, p: F.unfold(images, p, stride=p).transpose(1, 2)  # as the graded test
    return _ref


def make_variant(name):
    """A ViT class for variant `name`, built on the given TransformerBlock."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    ns = reference()
    Block = ns["TransformerBlock"]

    class Variant(nn.Module):
        def __init__(self, image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers):
            super().__init__()
            self.p, self.channels = patch_size, channels
            n = (image_size // patch_size) ** 2
            cls_init = torch.randn(1, 1, d_model) * 0.02 if name == "cls_token N(0, 0.02)" else torch.zeros(1, 1, d_model)
            make = {
                "embedding": lambda: setattr(self, "patch_embedding", nn.Linear(channels * patch_size ** 2, d_model)),
                "cls": lambda: setattr(self, "cls_token", nn.Parameter(cls_init.clone())),
                "positions": lambda: setattr(self, "position_embedding",
                                             nn.Parameter(torch.randn(1, n + 1, d_model) * 0.02)),
                "blocks": lambda: setattr(self, "blocks", nn.ModuleList(
                    Block(d_model, num_heads, 4 * d_model) for _ in range(num_layers))),
                "norm": lambda: setattr(self, "norm", nn.LayerNorm(d_model)),
                "head": lambda: setattr(self, "head", nn.Linear(d_model, num_classes)),
            }
            order = ["embedding", "cls", "positions", "blocks", "norm", "head"]
            if name == "reversed creation order":
                order = order[::-1]
            elif name == "blocks first":
                order = ["blocks", "embedding", "cls", "positions", "norm", "head"]
            for part in order:
                make[part]()
            with torch.no_grad():
                if name == "truncated normal std 0.02":
                    nn.init.trunc_normal_(self.cls_token, std=0.02)
                    nn.init.trunc_normal_(self.position_embedding, std=0.02)
                if name == "N(0, 1) class token and positions":
                    self.cls_token.normal_()
                    self.position_embedding.normal_()

        def forward(self, images, return_attention=False):
            d_model = self.cls_token.shape[-1]
            if name == "strided convolution":
                kernel = self.patch_embedding.weight.view(d_model, self.channels, self.p, self.p)
                x = F.conv2d(images, kernel, self.patch_embedding.bias, stride=self.p).flatten(2).transpose(1, 2)
            else:
                x = self.patch_embedding(ns["patchify"](images, self.p))
            cls = self.cls_token.expand(len(x), -1, -1)
            if name == "class token's position added apart":
                x = torch.cat([cls + self.position_embedding[:, :1], x + self.position_embedding[:, 1:]], dim=1)
            elif name == "no positions":
                x = torch.cat([cls, x], dim=1)
            else:
                x = torch.cat([cls, x], dim=1) + self.position_embedding
            attention = []
            for block in self.blocks:
                x = block(x)
                attention.append(block.attn.last_weights)
            x = self.norm(x)
            logits = self.head(x.mean(dim=1) if name == "mean pooling" else x[:, 0])
            return (logits, attention) if return_attention else logits

    return Variant


REQUIRED = ["reference", "cls_token N(0, 0.02)", "truncated normal std 0.02", "reversed creation order", "blocks first",
            "strided convolution", "class token's position added apart"]
NOT_REQUIRED = ["N(0, 1) class token and positions", "no positions", "mean pooling"]


def run(job):
    """Train variant `name` with `seed` as the graded test does (seed 0 there); return the measurements."""
    name, seed = job
    import torch

    ns = reference()
    torch.manual_seed(seed)
    model = ns["ViT"](**CONFIG) if name == "reference" else make_variant(name)(**CONFIG)
    start = time.process_time()
    losses = ns["train_digits"](model, seed=seed)
    seconds = time.process_time() - start
    return {"variant": name, "seed": seed, "accuracy": ns["evaluate_digits"](model), "loss": losses[-1],
            "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0 .. N-1 (default 20)")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel, one thread each")
    parser.add_argument("--variants", nargs="*", default=REQUIRED + NOT_REQUIRED)
    args = parser.parse_args()
    jobs = [(name, seed) for name in args.variants for seed in range(args.seeds)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, jobs))
    print(f"{len(jobs)} runs in {time.perf_counter() - start:.0f} s ({args.jobs} in parallel, 1 thread each); "
          f"threshold: test accuracy >= {ACCURACY_THRESHOLD}\n")
    print(f"{'variant':44s} {'accuracy min / mean / max':26s} {'last loss max':>13s} {'train CPU s median':>18s} "
          f"{'fails':>5s}")
    all_pass = True
    for name in args.variants:
        rows = [r for r in results if r["variant"] == name]
        accuracies = [r["accuracy"] for r in rows]
        fails = [r["seed"] for r in rows if r["accuracy"] < ACCURACY_THRESHOLD]
        required = name in REQUIRED
        all_pass &= not fails or not required
        print(f"{name + ('' if required else ' (not required)'):44s} "
              f"{min(accuracies):.3f} / {statistics.mean(accuracies):.3f} / {max(accuracies):.3f}{'':7s} "
              f"{max(r['loss'] for r in rows):13.3f} {statistics.median(r['seconds'] for r in rows):18.2f} "
              f"{len(fails):>5d}" + (f"  seeds {fails}" if fails else ""))
    required_rows = [r["accuracy"] for r in results if r["variant"] in REQUIRED]
    if required_rows:
        print(f"\nrequired variants: accuracy min {min(required_rows):.3f}, mean {statistics.mean(required_rows):.3f}, "
              f"max {max(required_rows):.3f} over {len(required_rows)} runs (threshold {ACCURACY_THRESHOLD}); "
              f"{'every required variant passes on every seed' if all_pass else 'SOME REQUIRED RUN FAILS'}")
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
