# Averages within each sequence first, then over the sequences (a sequence with few repeats weighs as much as one with many).
# replace: scores.append((on_target * repeated[:, None]).sum(dim=(0, 2)) / repeated.sum())
# with: scores.append(((on_target * repeated[:, None]).sum(dim=2) / repeated.sum(dim=1, keepdim=True)).mean(dim=0))
