"""The op modules: each builds outputs and sends its numpy kernel through the one door."""
