"""The catalogue: what each platform and hardware model is and can do, read by every stage."""
