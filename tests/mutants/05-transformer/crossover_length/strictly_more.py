# Asks for strictly more operations than the feed-forward layer instead of at least as many.
# replace: mixing >= position_wise
# with: mixing > position_wise
