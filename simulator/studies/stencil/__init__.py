"""The roofline intensity sweep (001) and the stencil tiling studies (004), and 004's tile-size selection on its own."""
