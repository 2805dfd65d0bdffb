# A window of window + 1 tokens: query i also sees key i - window.
# replace: (i - j < window)
# with: (i - j <= window)
