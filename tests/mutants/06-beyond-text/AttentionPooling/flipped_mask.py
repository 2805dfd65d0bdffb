# Passes `present` itself as key_padding_mask, whose True means "ignore": the seeds attend to the padding only.
# replace: ignore = ~(present | ~nonempty[:, None])
# with: ignore = present & nonempty[:, None]
