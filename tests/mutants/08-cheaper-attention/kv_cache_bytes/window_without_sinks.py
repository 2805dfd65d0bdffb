# Leaves the sinks out of the sliding window's cache: min(T, window) tokens.
# replace: min(T, kw["window"] + kw.get("sinks", 0))
# with: min(T, kw["window"])
