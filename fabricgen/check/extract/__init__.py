"""One fact extractor per platform: its rendered files -> `check.facts.DeviceFacts` (the registry names them)."""
