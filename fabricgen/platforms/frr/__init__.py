"""Linux + FRR: renderer, the BGP part SONiC shares, config facts, ethtool counters."""
