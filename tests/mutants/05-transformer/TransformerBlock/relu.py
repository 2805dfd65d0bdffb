# Uses ReLU in the feed-forward layer instead of GELU.
# replace: nn.GELU()
# with: nn.ReLU()
