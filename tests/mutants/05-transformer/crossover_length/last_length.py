# Overwrites the answer at every length where attention costs more, so it ends at the last length of the list.
# replace: if crossover_length is None and mixing >= position_wise:
# with: if mixing >= position_wise:
