"""Arista EOS: renderer and config facts."""
