"""The LogCA studies (000): crypto units on their platforms, and the GPU-style kernel device."""
