"""The intent: the fabric as the user declares it, read defensively and validated (pydantic)."""
