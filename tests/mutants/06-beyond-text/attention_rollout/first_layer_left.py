# Multiplies the layers in the wrong order, the first layer on the left (A_1 A_2 ... A_L).
# replace: rollout = mixed if rollout is None else mixed @ rollout
# with: rollout = mixed if rollout is None else rollout @ mixed
