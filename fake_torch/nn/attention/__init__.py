"""torch.nn.attention: fake_torch provides its flex_attention module's names (see there)."""
