"""SONiC: ConfigDB + FRR renderer, buffers, ConfigDB ownership, shipped SKU facts, counters."""
