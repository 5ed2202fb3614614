"""Per-platform structured config + template selection: nxos, sonic (config_db.json + FRR), frr."""
