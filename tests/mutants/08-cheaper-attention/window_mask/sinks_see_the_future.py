# Lets every query see the sinks, also the sinks after it: the causal condition applies to the window only.
# replace: return (j <= i) & ((i - j < window) | (j < sinks))
# with: return ((j <= i) & (i - j < window)) | (j < sinks)
