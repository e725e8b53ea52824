"""The compiled node states of the library's body types (BODIES.md, *The contract*)."""
