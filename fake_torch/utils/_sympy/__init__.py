"""torch.utils._sympy: the sympy functions and value ranges of symbolic shapes.

Imported only when a symbol is made (fake_torch.fx.experimental.symbolic_shapes does it
lazily), so `import fake_torch` never loads sympy."""
