"""The compiled engine: one module per request family, over the flat state tables."""
