"""The LogCA studies (000): crypto units on their platforms, and the GPU-style kernel device."""

#: the files the two LogCA runners (crypto and GPU) write into their shared output directory (results/logca),
#: as shell globs, so that each may rewrite a directory that holds the other's figures (the --out check)
OUTPUT_PATTERNS = ("speedup_*.png", "crypto_*.png", "gpu_*.png", "gpu_*.csv",
                   "README.md")  # the folder's guide (results/logca keeps one), which the studies leave alone
