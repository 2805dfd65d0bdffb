# Multiplies the scores by the temperature instead of dividing.
# replace: softmax(scores / t)
# with: softmax(scores * t)
