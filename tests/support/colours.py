"""Colour contrast as WCAG 2.1 measures it, for the tests of the book's figures and of the instructor's report."""
from matplotlib import colors

# WCAG 2.1's success criterion 1.4.11: the parts of a graphic that carry meaning need 3:1 against what is next to them.
NON_TEXT_CONTRAST = 3.0


def contrast(a, b) -> float:
    """WCAG 2.1's contrast ratio of two colours (any matplotlib colour spec), from 1 to 21."""
    def luminance(colour):
        channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in colors.to_rgb(colour)]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
