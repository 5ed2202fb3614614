"""Cisco NX-OS: renderer, hardware models, config facts, structural check, counters."""
